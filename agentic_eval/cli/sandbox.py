"""CLI command `sandbox build`: the docker sandbox's image, built or imported on each engine named."""

from __future__ import annotations

import argparse
import sys
import time


def sandbox_build(args: argparse.Namespace) -> int:
    from agentic_eval.confine.docker_image import cache_dir, client_for, ensure_image, recipe

    rec = recipe(args.package or ())
    hosts = args.docker_host or [None]
    print(f"image {rec.tag}: {rec.suite}, {len(rec.packages)} Debian packages (root filesystem cached in "
          f"{cache_dir()})", file=sys.stderr)
    start = time.monotonic()
    for host in hosts:
        client = client_for(host)
        tag, how = ensure_image(client, rec, log=lambda line: print(line, file=sys.stderr))
        where = host or "the default engine (DOCKER_HOST)"
        print(f"{tag} on {where}: {how}")
    print(f"done in {time.monotonic() - start:.1f}s; use it with: agentic-eval run --sandbox docker ...",
          file=sys.stderr)
    return 0
