"""A tiny causal language model made on the fly: random weights, a BPE tokenizer trained on a
few sentences, and a chat template. Nothing is downloaded."""

from __future__ import annotations

from pathlib import Path

SENTENCES = [
    "河童は川に住むと言われることが多い。", "天狗は山に住むと伝えられる。",
    "The kappa is often said to live in rivers.", "Answer with JSON only.",
    "{\"answer_index\": 1}", "{\"question\": \"...\"}", "Question: which season? Answer: winter.",
]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def make_tiny_model(directory, positions: int = 8192, sentences: list[str] | None = None,
                    vocab_size: int = 400) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    directory = Path(directory)
    special = ["<|end|>", "<|user|>", "<|system|>", "<|assistant|>", "<|pad|>"]
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(sentences or SENTENCES * 20, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=special, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|end|>", pad_token="<|pad|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(directory)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=positions, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    GPT2LMHeadModel(config).save_pretrained(directory)
    return directory
