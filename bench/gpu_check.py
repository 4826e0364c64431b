"""The evaluators on a CUDA GPU (run by hand on a GPU machine: ``python bench/gpu_check.py``).

1. The tiny test model on CUDA in float32 gives the CPU's log-likelihoods, token log-probs and
   greedy generations; in bf16 (the default on CUDA) close to them.
2. A real out-of-memory: a ~1.1B random Llama asked for batches far too large halves its batch
   until they fit, and its numbers equal a run at a batch size that fits from the start.
3. The throughput figures of ``bench_eval.gpu``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import torch  # noqa: E402

from bench_eval import gpu, questions  # noqa: E402
from tests.tiny_model import make_tiny_model  # noqa: E402
from wikiorigin.evaluators import mcq  # noqa: E402
from wikiorigin.evaluators.models import LocalModel  # noqa: E402


def same_numbers(work: Path) -> None:
    directory = make_tiny_model(work / "tiny", positions=1024)
    rows = questions(50)
    requests = [(mcq.question_prompt(r) + "\n回答：", c) for r in rows for c in r["choices"]]
    texts = [r["question"] * 20 for r in rows[:8]]
    cpu = LocalModel(directory, device="cpu")
    cuda = LocalModel(directory, device="cuda", dtype="float32")
    bf16 = LocalModel(directory)  # auto: cuda, bfloat16
    assert bf16.device == "cuda" and bf16.model.dtype == torch.bfloat16
    a, b, c = (m.loglikelihood(requests) for m in (cpu, cuda, bf16))
    worst = max(abs(x[0] - y[0]) for x, y in zip(a, b))
    worst_bf16 = max(abs(x[0] - y[0]) / max(1.0, abs(x[0])) for x, y in zip(a, c))
    lp_cpu, lp_cuda = (
        cpu.token_logprobs(texts, windows="overlap", stride=256),
        cuda.token_logprobs(texts, windows="overlap", stride=256),
    )
    worst_lp = max(abs(x - y) for p, q in zip(lp_cpu, lp_cuda) for x, y in zip(p, q))
    gen_cpu = LocalModel(directory, device="cpu", chat=False).generate(
        [r["question"] for r in rows[:8]], max_new_tokens=8, temperature=0
    )
    gen_cuda = LocalModel(directory, device="cuda", dtype="float32", chat=False).generate(
        [r["question"] for r in rows[:8]], max_new_tokens=8, temperature=0
    )
    print(
        f"tiny model, {len(requests)} options: |cuda fp32 - cpu| max {worst:.2e}; bf16 relative max "
        f"{worst_bf16:.2e}; token log-probs max {worst_lp:.2e}; greedy generations equal: {gen_cpu == gen_cuda}"
    )
    assert worst < 1e-3 and worst_lp < 1e-3


def real_out_of_memory(work: Path) -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    directory = make_tiny_model(work / "oom")
    config = LlamaConfig(
        vocab_size=32000,
        hidden_size=2048,
        intermediate_size=5632,
        num_hidden_layers=16,
        num_attention_heads=16,
        num_key_value_heads=16,
        max_position_embeddings=4096,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=4,
    )
    with torch.device("cuda"):
        LlamaForCausalLM(config).to(torch.bfloat16).save_pretrained(directory)
    rng = torch.Generator().manual_seed(0)
    words = ["河童", "天狗", "雪女", "山", "川", "村", "夜", "は", "に", "と"]
    texts = ["".join(words[i] for i in torch.randint(0, 10, (1500,), generator=rng).tolist()) for _ in range(512)]
    requests = [(t, "。") for t in texts]
    model = LocalModel(directory, max_batch_size=512)
    greedy = model.loglikelihood(requests)
    print(
        f"output layer on hidden states (continuations scored at real steps only): {model._output_layer() is not None}"
    )
    print(
        f"out of memory: asked for batches of 512 x ~{len(model.encode(texts[0]))} tokens; "
        f"ran at {model.batch_size}; peak {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB"
    )
    again = LocalModel(directory, max_batch_size=model.batch_size).loglikelihood(requests[:64])
    assert model.batch_size < 512
    assert max(abs(x[0] - y[0]) for x, y in zip(greedy[:64], again)) < 0.05


def main() -> None:
    assert torch.cuda.is_available(), "no CUDA device"
    print(torch.cuda.get_device_name(), torch.__version__)
    with tempfile.TemporaryDirectory() as d:
        same_numbers(Path(d))
        real_out_of_memory(Path(d))
        torch.cuda.empty_cache()
        gpu(Path(d))


if __name__ == "__main__":
    main()
