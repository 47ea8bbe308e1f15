"""CLI command `sandbox build`: the docker sandbox's image, built or imported on each engine named."""

from __future__ import annotations

import argparse
import sys
import time

from agentic_eval.cli.args import needs_action, print_help_of


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("sandbox", help="the docker sandbox's image",
                       description="Build the image `--sandbox docker` runs trials in: Debian's packages "
                       "(debootstrap, no registry), imported into each engine, tagged by its recipe's hash.")
    actions = needs_action(p, "sandbox_command")
    p_build = actions.add_parser("build", help="build (or import from the cache) the image on each engine",
                                 description="Build the docker sandbox's image from Debian's packages (a minute or "
                                 "two the first time, as root, with debootstrap), or import it from the cache, on "
                                 "every engine named.")
    p_build.add_argument("--docker-host", action="append", metavar="URL",
                         help="an engine to build on (repeatable; default DOCKER_HOST)")
    p_build.add_argument("--package", action="append", metavar="DEB",
                         help="an extra Debian package in the image (repeatable)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`sandbox build`; `sandbox` alone prints its help."""
    return sandbox_build(args) if args.sandbox_command == "build" else print_help_of(args)


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
