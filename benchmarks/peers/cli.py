"""The command line: every missing (peer, problem, seed) run of a grid, appended to ``--out``.

Runs whose key is already in ``--out`` with at least ``n_calls`` evaluations
are skipped, so an interrupted grid resumes. Records are appended with
:func:`treebo.bench.append_record` (one ``O_APPEND`` write each), so ``treebo
bench`` may write to the same directory at the same time. Each run keeps
BLAS, OpenMP, joblib and torch to one thread (:func:`single_thread`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from treebo.bench import N_INITIAL, RunSpec, append_record, completed_runs, load_results

from .protocol import UnsupportedSpace
from .registry import BINARY_N_CALLS, INSTALL, PEERS, peer_n_calls, run_peer

DEFAULT_OUT = "benchmarks/results/regret/grid"


@contextlib.contextmanager
def single_thread() -> Iterator[None]:
    """Keep BLAS, OpenMP, joblib and torch to one thread inside the block (shared machines)."""
    from threadpoolctl import threadpool_limits

    saved = os.environ.get("LOKY_MAX_CPU_COUNT")
    os.environ["LOKY_MAX_CPU_COUNT"] = "1"  # joblib's n_jobs=-1 (SMAC's forest) -> 1 worker
    torch = sys.modules.get("torch")
    torch_threads = torch.get_num_threads() if torch is not None else None
    try:
        with threadpool_limits(limits=1):
            if torch is not None:
                torch.set_num_threads(1)
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(torch_threads)
        if saved is None:
            os.environ.pop("LOKY_MAX_CPU_COUNT", None)
        else:
            os.environ["LOKY_MAX_CPU_COUNT"] = saved


def _describe(record: dict) -> str:
    n0 = record["n_initial"]
    proposals = record["acq_time"][n0:]
    per = sum(proposals) / max(len(proposals), 1)
    if record["regret"] is not None:
        final = f"best regret {record['regret'][-1]:.3g}"
    else:
        final = f"best value {record['best_so_far'][-1]:.6g}"
    return (
        f"{record['problem']}/{record['surrogate']}/seed {record['seed']}: {final} after "
        f"{record['n_evaluated']} calls, {per:.3f} s per proposal, "
        f"{record['wall_time']:.1f} s"
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.peers",
        description="Run peer optimizers on treebo's benchmark problems; records go where "
        "`treebo bench` puts its own, for `treebo summary` and `treebo plot`.",
    )
    parser.add_argument(
        "--problems",
        nargs="+",
        required=True,
        metavar="NAME",
        help="problem names or groups, as for `treebo bench --problems` "
        "(bbob: COCO's functions, see --functions, --dims, --instances)",
    )
    for option, text in (
        ("--functions", "bbob functions, e.g. 1-24 or 1,8,21 (default: 1-24)"),
        ("--dims", "bbob dimensions, e.g. 2 5 10 (default: 2 5 10)"),
        ("--instances", "bbob instances, e.g. 1-3 (default: 1-3)"),
    ):
        parser.add_argument(option, nargs="+", metavar="N", help=text + "; with --problems bbob")
    parser.add_argument(
        "--peers",
        nargs="+",
        default=list(PEERS),
        metavar="NAME",
        help=f"peers to run, in this order (default: all of {list(PEERS)})",
    )
    parser.add_argument(
        "--seeds",
        nargs="+",
        default=["0-9"],
        metavar="SEEDS",
        help="seeds and ranges, e.g. 0-9 (default: 0-9)",
    )
    parser.add_argument(
        "--n-calls",
        type=int,
        help=f"evaluations per run, the initial points included (default: "
        f"treebo's budget of the problem, {BINARY_N_CALLS} for the binary "
        "problems)",
    )
    parser.add_argument(
        "--out", default=DEFAULT_OUT, help=f"results directory (default: {DEFAULT_OUT})"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run every missing (peer, problem, seed) run, peers outermost; 0 if all ran."""
    from treebo.bench import parse_int_ranges, parse_seeds
    from treebo.problems import select_problems

    args = _parser().parse_args(argv)
    try:
        selection = {
            key: None
            if getattr(args, key) is None
            else parse_int_ranges(getattr(args, key), f"--{key}")
            for key in ("functions", "dims", "instances")
        }
        problems = select_problems(args.problems, **selection)
        seeds = parse_seeds(args.seeds)
    except ValueError as error:
        print(f"peers: {error}", file=sys.stderr)
        return 2
    unknown = [p for p in args.peers if p not in PEERS]
    if unknown:
        print(f"peers: unknown peer(s) {unknown}; choose from {list(PEERS)}", file=sys.stderr)
        return 2
    if args.n_calls is not None and args.n_calls <= N_INITIAL:
        print(f"peers: --n-calls must be larger than {N_INITIAL}", file=sys.stderr)
        return 2
    peers = list(dict.fromkeys(args.peers))
    status = 0
    for name in list(peers):
        missing = PEERS[name].missing()
        if missing:
            print(
                f"peers: skipping {name}: {', '.join(missing)} not installed; install with: "
                f"{INSTALL}",
                file=sys.stderr,
            )
            peers.remove(name)
            status = 1
    if "optuna_gp" in peers:
        import torch  # noqa: F401 - imported now so that single_thread limits its threads
    out = Path(args.out)
    done = completed_runs(load_results(out)) if out.exists() else {}
    with single_thread():
        status = max(status, run_all(peers, problems, seeds, args.n_calls, out, done))
    return status


def run_all(
    peers: list[str],
    problems: list[str],
    seeds: list[int],
    n_calls_arg: int | None,
    out: Path,
    done: dict[str, int],
) -> int:
    status, skipped = 0, 0
    for peer in peers:
        for problem in problems:
            n_calls = n_calls_arg or peer_n_calls(problem)
            for seed in seeds:
                key = RunSpec(problem=problem, surrogate=peer, seed=seed, n_calls=n_calls).key()
                if done.get(key, 0) >= n_calls:
                    skipped += 1
                    continue
                try:
                    record = run_peer(peer, problem, seed, n_calls)
                except UnsupportedSpace as error:  # the same for every seed: say it once
                    print(
                        f"peers: skipping {peer} on {problem}: {error}", file=sys.stderr, flush=True
                    )
                    status = 1
                    break
                except Exception as error:  # noqa: BLE001 - one failed run must not stop the grid
                    print(
                        f"peers: {problem}/{peer}/seed {seed} failed: "
                        f"{type(error).__name__}: {error}",
                        file=sys.stderr,
                        flush=True,
                    )
                    status = 1
                    continue
                append_record(out, record)
                done[key] = record["n_evaluated"]
                print(_describe(record), flush=True)
    if skipped:
        print(f"peers: {skipped} runs already in {out}, skipped", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
