"""Evaluator throughput.

CPU (always):

- lm-evaluation-harness against us: the log-likelihoods of the options of 100 released
  YokaiEval questions (400 requests, each question's context as ``wikiorigin eval mcq --mode
  loglikelihood`` builds it) under a random Llama whose tokenizer adds ``<s>`` (default 4
  layers, 256 wide, 8k vocabulary, float32), scored by lm-eval's ``HFLM.loglikelihood`` (its
  defaults, same batch size) and by ``LocalModel.loglikelihood`` in the same run, best of 3.
  The numbers must agree (1e-4) or the bench fails; it prints the ratio.
- batching: log-likelihood MCQ scoring of 200 questions (800 options) with a tiny random GPT-2
  (2 layers, 32 wide), batched against one question at a time (its 4 options in one call),
  same run. Anchor: >= 8x.

GPU (``--gpu``, when CUDA is there): a ~1.1B-parameter random Llama in bf16; tokens/s of
batched log-likelihood against a plain transformers loop (one request per forward pass), and of
batched generation against ``generate`` one prompt at a time. Figures are recorded, no anchor.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import common  # noqa: E402, F401  (its figure lines go to bench/out/results: the performance page)
from tests.tiny_model import make_tiny_llama, make_tiny_model  # noqa: E402
from wikiorigin.evaluators import mcq  # noqa: E402
from wikiorigin.evaluators.models import LocalModel  # noqa: E402

RAW = json.loads(lzma.open(ROOT / "tests/data/yokaieval/responses-calm2-7b-chat.json.xz").read())


def tokenizer_texts() -> list[str]:
    """Japanese text to train the random model's tokenizer on (the articles the questions were
    written from), so that prompts are about as many tokens as a real model's tokenizer makes."""
    return [r["question"]["yokai"]["detail"] for r in RAW] + [r["question_prompt"] for r in RAW]


def questions(n: int = 200) -> list[dict]:
    raw, rows = RAW, []
    for i, r in enumerate(raw[:n]):
        q = r["question"]
        rows.append(
            {
                "id": str(i),
                "question": q["question"],
                "choices": q["choices"],
                "answer_index": q["choices"].index(q["answer"]),
                "type": "",
                "region": "",
                "title": "",
                "language": "ja",  # the released rows' wiki: the library assumes no language
            }
        )
    return rows


def timed(fn):
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def cpu(work: Path, n: int = 200, tries: int = 3) -> None:
    import torch

    torch.set_num_threads(2)
    directory = make_tiny_model(work / "tiny", sentences=tokenizer_texts(), vocab_size=8000)
    model = LocalModel(directory, device="cpu", max_batch_size=64)
    rows = questions(n)
    tokens = sum(len(model.encode(mcq.question_prompt(r) + c)) for r in rows for c in r["choices"]) / (4 * n)
    mcq.evaluate_loglikelihood(rows[:8], model)  # warm up
    best = {}
    runs = (
        ("a plain loop, one question at a time", lambda: plain_loop(model, rows)),
        ("our runner, one question per call", lambda: [mcq.evaluate_loglikelihood([r], model)[0] for r in rows]),
        ("batched", lambda: mcq.evaluate_loglikelihood(rows, model, batch_size=64)),
    )
    for _ in range(tries):
        for name, run in runs:
            seconds, items = timed(run)
            best[name] = min(best.get(name, (1e9,))[0], seconds), items
    batch_s, many = best["batched"]
    same = all(
        abs(a - b) < 1e-4
        for name in best
        for x, y in zip(best[name][1], many)
        for a, b in zip(x["loglikelihoods"], y["loglikelihoods"])
    )
    print(
        f"bench_eval (cpu): {n} questions x 4 options (~{tokens:.0f} tokens each), tiny random GPT-2, best of {tries}; "
        f"same numbers: {same}"
    )
    for name, _ in runs[:2]:
        print(
            f"  batched {batch_s:.2f} s vs {name} {best[name][0]:.2f} s: ratio {best[name][0] / batch_s:.1f}x"
            + (" (anchor >= 8x)" if name.startswith("a plain") else "")
        )
    for name, _ in runs[:2]:  # the figure lines (the performance page's table)
        label = f"MCQ log-likelihood, {n} questions, tiny GPT-2: {name} / batched"
        print(
            f"{label:<44}  {best[name][0] / batch_s:.1f}x ({'anchor >= 8x' if name.startswith('a plain') else 'recorded'})"
        )


def against_lmeval(
    work: Path, n: int = 100, batch_size: int = 32, hidden: int = 256, layers: int = 4, tries: int = 3
) -> None:
    """lm-eval's HFLM.loglikelihood and ours on the same requests, same run, best of 3."""
    import torch
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    torch.set_num_threads(2)
    directory = make_tiny_llama(work / "llama", tokenizer_texts(), vocab_size=8000, hidden=hidden, layers=layers)
    rows = questions(n)
    requests = [(mcq.question_prompt(r) + mcq.ANSWER_CUES["ja"], c) for r in rows for c in r["choices"]]
    theirs = HFLM(pretrained=str(directory), device="cpu", batch_size=batch_size)
    ours = LocalModel(directory, device="cpu", max_batch_size=batch_size)
    params = sum(p.numel() for p in ours.model.parameters()) / 1e6
    tokens = sum(len(ours.tokenizer(a + b)["input_ids"]) for a, b in requests) / len(requests)
    instances = [Instance("loglikelihood", {}, r, i) for i, r in enumerate(requests)]
    runs = {
        "lm-eval HFLM.loglikelihood": lambda: theirs.loglikelihood(instances, disable_tqdm=True),
        "LocalModel.loglikelihood": lambda: ours.loglikelihood(requests, batch_size=batch_size),
    }
    for run in runs.values():  # warm up
        run()
    times, results = {}, {}
    for _ in range(tries):
        for name, run in runs.items():
            seconds, results[name] = timed(run)
            times[name] = min(times.get(name, seconds), seconds)
    lm_s, lm_out = times["lm-eval HFLM.loglikelihood"], results["lm-eval HFLM.loglikelihood"]
    our_s, our_out = times["LocalModel.loglikelihood"], results["LocalModel.loglikelihood"]
    worst = max(abs(a - b) for (a, _), (b, _) in zip(lm_out, our_out))
    if worst > 1e-4 or [g for _, g in lm_out] != [g for _, g in our_out]:
        raise SystemExit(f"bench_eval: lm-eval and we disagree: largest difference {worst:.2e}")
    print(
        f"bench_eval (cpu, 2 threads): {n} questions x 4 options (~{tokens:.0f} tokens each, <s> included), "
        f"random Llama {params:.1f}M parameters ({layers} layers, {hidden} wide, float32), batch {batch_size}, "
        f"best of {tries}; same numbers (largest difference {worst:.1e})"
    )
    print(f"  lm-eval {lm_s:.2f} s vs ours {our_s:.2f} s: ratio {lm_s / our_s:.1f}x")
    label = f"MCQ log-likelihood, {n} questions x 4, random Llama: lm-eval HFLM / ours"
    print(f"{label:<44}  {lm_s / our_s:.1f}x (same numbers within 1e-4; recorded)")


def plain_loop(model, rows) -> list[dict]:
    """The reference without batching: each option of each question, one after the other, one
    forward pass over context + option, its tokens' log-probabilities summed."""
    import torch

    items = []
    for row in rows:
        context = mcq.question_prompt(row) + mcq.ANSWER_CUES["ja"]
        scores = []
        for choice in row["choices"]:
            head, tail = model._split(context, choice)
            with torch.inference_mode():
                logp = model.model(torch.tensor([head + tail])).logits[0].float().log_softmax(-1)
            scores.append(sum(float(logp[len(head) - 1 + j, t]) for j, t in enumerate(tail)))
        items.append({"loglikelihoods": scores})
    return items


def gpu(work: Path, n: int = 256) -> None:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    directory = make_tiny_model(work / "big")  # the tokenizer; the weights are replaced below
    config = LlamaConfig(
        vocab_size=32000,
        hidden_size=2048,
        intermediate_size=5632,
        num_hidden_layers=16,
        num_attention_heads=16,
        num_key_value_heads=16,
        max_position_embeddings=2048,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=4,
    )
    with torch.device("cuda"):
        big = LlamaForCausalLM(config).to(torch.bfloat16)
    params = sum(p.numel() for p in big.parameters()) / 1e9
    big.save_pretrained(directory)
    del big
    model = LocalModel(directory, max_batch_size=64)
    rows = questions(n // 4)
    requests = [(mcq.question_prompt(r) + "\n回答：", c) for r in rows for c in r["choices"]]
    tokens = sum(len(model.encode(a + b)) for a, b in requests)
    model.loglikelihood(requests[:64])
    torch.cuda.synchronize()
    batch_s, _ = timed(lambda: (model.loglikelihood(requests), torch.cuda.synchronize()))

    def plain_loop():
        for context, continuation in requests:
            ids = torch.tensor([model.encode(context + continuation)], device="cuda")
            with torch.no_grad():
                model.model(ids).logits.float().log_softmax(-1)
        torch.cuda.synchronize()

    loop_s, _ = timed(plain_loop)
    print(
        f"bench_eval (gpu {torch.cuda.get_device_name()}): random Llama {params:.2f}B bf16 "
        f"(output layer on hidden states: {model._output_layer() is not None}); "
        f"log-likelihood of {len(requests)} options ({tokens:,} tokens): batched {tokens / batch_s:,.0f} tok/s, "
        f"plain loop {tokens / loop_s:,.0f} tok/s, ratio {loop_s / batch_s:.1f}x"
    )
    prompts = [mcq.question_prompt(r, mcq.INSTRUCTIONS["ja"]) for r in rows]
    new = 64
    model.generate(prompts[:4], max_new_tokens=4)
    gen_s, _ = timed(lambda: (model.generate(prompts, max_new_tokens=new, temperature=0.1), torch.cuda.synchronize()))
    k = 16  # one at a time on a part, rate scaled

    def one_at_a_time():
        for p in prompts[:k]:
            ids = model.tokenizer(model.format_prompt(p), add_special_tokens=False, return_tensors="pt").to("cuda")
            model.model.generate(
                **ids,
                max_new_tokens=new,
                min_new_tokens=new,
                do_sample=True,
                temperature=0.1,
                pad_token_id=model.tokenizer.pad_token_id,
            )
        torch.cuda.synchronize()

    single_s, _ = timed(one_at_a_time)
    batched_rate = len(prompts) * new / gen_s  # upper bound: rows may stop early at EOS
    print(
        f"  generation of {new} new tokens for {len(prompts)} prompts: batched ~{batched_rate:,.0f} tok/s "
        f"(batch {model.batch_size}), one at a time {k * new / single_s:,.0f} tok/s, "
        f"ratio ~{batched_rate / (k * new / single_s):.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", action="store_true", help="also the GPU figures (needs CUDA)")
    parser.add_argument("--hidden", type=int, default=256, help="width of the Llama scored by lm-eval and us")
    parser.add_argument("--layers", type=int, default=4, help="layers of that Llama")
    parser.add_argument("--quick", action="store_true", help="20 and 40 questions, best of one (make bench-quick)")
    args = parser.parse_args()
    tries = 1 if args.quick else 3
    with tempfile.TemporaryDirectory() as d:
        against_lmeval(Path(d), 20 if args.quick else 100, hidden=args.hidden, layers=args.layers, tries=tries)
        cpu(Path(d), 40 if args.quick else 200, tries)
        if args.gpu:
            gpu(Path(d))


if __name__ == "__main__":
    main()
