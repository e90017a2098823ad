#!/usr/bin/env python3
"""Hardware-aware evolutionary search with tilewave as the latency predictor
(docs/python.md "Evolutionary search").

Aging ("regularized") evolution over a shipped search space: each step takes
a tournament from the population, mutates the winner's encoding in one choice
and drops the oldest member. Candidates over the latency budget, or below the
utilization floor, are rejected before anyone would train them.

The fitness is a stand-in: FLOPs as a capacity proxy, since there is no
accuracy to hand here. A real search puts its accuracy predictor (or a short
training run) in `fitness()`; tilewave supplies the GPU side: predicted
latency and utilization on the chosen GPU, batch and runtime, in-process.

  python3 docs/examples/evolution.py --space mobilenetv2 --gpu h200 --batch 1 --generations 200
"""
import argparse
import collections
import random
import sys
import time

import tilewave


def mutate(encoding, options, rng):
    """The encoding with one choice of one stage set to another of its options."""
    stages = [s.split("-") for s in encoding.split("_")]
    while True:
        i = rng.randrange(len(stages))
        j = rng.randrange(len(stages[i]))
        texts = list(options[i].values())[j]
        if len(texts) > 1:
            break
    stages[i][j] = rng.choice([t for t in texts if t != stages[i][j]])
    return "_".join("-".join(s) for s in stages)


def fitness(score):
    return score["flops"]  # replace with an accuracy predictor


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--space", default="mobilenetv2", help="a shipped space name or a space file")
    p.add_argument("--gpu", default="h200")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--runtime", default="eager")
    p.add_argument("--budget-us", type=float, help="latency budget (default: the first population's median)")
    p.add_argument("--min-utilization", type=float, default=0.0)
    p.add_argument("--population", type=int, default=64)
    p.add_argument("--sample", type=int, default=16, help="tournament size")
    p.add_argument("--generations", type=int, default=500, help="mutations after the first population")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()

    space = tilewave.Space(a.space)
    scorer = space.scorer(gpu=a.gpu, batch=a.batch, runtime=a.runtime)
    options = space.options()
    rng = random.Random(a.seed)
    start = time.perf_counter()

    population = collections.deque()
    first = scorer.score_many([space.sample(a.seed, i) for i in range(a.population)])
    budget = a.budget_us or sorted(s["time_us"] for s in first)[len(first) // 2]

    def admissible(s):
        return s["time_us"] <= budget and s["utilization"] >= a.min_utilization

    population.extend(first)
    history = list(first)
    rejected = 0
    for _ in range(a.generations):
        contenders = rng.sample(list(population), min(a.sample, len(population)))
        parent = max(contenders, key=lambda s: (admissible(s), fitness(s)))
        child = scorer.score(mutate(parent["encoding"], options, rng))
        history.append(child)
        if not admissible(child):
            rejected += 1
            continue
        population.append(child)
        population.popleft()  # aging: the oldest goes, however good

    seconds = time.perf_counter() - start
    ok = [s for s in history if admissible(s)]
    if not ok:
        print(f"no candidate met the budget of {budget:.1f} us", file=sys.stderr)
        return 1
    best = max(ok, key=fitness)
    first_ok = [s for s in first if admissible(s)]
    print(f"space {space.name} on {a.gpu}, batch {a.batch}, {a.runtime}: budget {budget:.1f} us, "
          f"{len(history)} candidates scored in {seconds:.2f} s ({len(history) / seconds:.0f}/s), "
          f"{rejected} mutants rejected")
    if first_ok:
        print(f"first population's best: {max(fitness(s) for s in first_ok) / 1e9:.3f} GFLOPs within budget")
    print(f"best: {best['encoding']}")
    print(f"      {best['flops'] / 1e9:.3f} GFLOPs, {best['params'] / 1e6:.2f} M params, "
          f"{best['time_us']:.1f} us, utilization {100 * best['utilization']:.2f}%, "
          f"main loss {best['main_loss']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
