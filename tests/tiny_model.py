"""A tiny causal language model made on the fly: random weights, a BPE tokenizer trained on a
few sentences, and a chat template. Nothing is downloaded."""

from __future__ import annotations

from pathlib import Path

SENTENCES = [
    "河童は川に住むと言われることが多い。",
    "天狗は山に住むと伝えられる。",
    "The kappa is often said to live in rivers.",
    "Answer with JSON only.",
    '{"answer_index": 1}',
    '{"question": "..."}',
    "Question: which season? Answer: winter.",
]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def make_tiny_model(
    directory, positions: int = 8192, sentences: list[str] | None = None, vocab_size: int = 400
) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    directory = Path(directory)
    special = ["<|end|>", "<|user|>", "<|system|>", "<|assistant|>", "<|pad|>"]
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        sentences or SENTENCES * 20,
        trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=special, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|end|>", pad_token="<|pad|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(directory)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=positions,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(directory)
    return directory


def make_tiny_llama(
    directory,
    texts: list[str],
    vocab_size: int = 1500,
    positions: int = 2048,
    hidden: int = 64,
    layers: int = 2,
    seed: int = 0,
) -> Path:
    """A random Llama whose tokenizer adds ``<s>`` (a Llama-style ``LlamaTokenizerFast``:
    SentencePiece-like BPE with ``▁`` for spaces, a ``▁`` before the text, byte fallback),
    its merges trained on ``texts`` word by word."""
    import json

    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, LlamaTokenizerFast

    directory = Path(directory)
    bpe = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    bpe.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)
    special = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
    bpe.train_from_iterator(
        texts, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special, max_token_length=6)
    )
    trained = json.loads(bpe.to_str())["model"]
    tokenizer = LlamaTokenizerFast(
        vocab=trained["vocab"], merges=[tuple(m) for m in trained["merges"]], add_bos_token=True
    )
    tokenizer.save_pretrained(directory)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(directory)
    return directory
