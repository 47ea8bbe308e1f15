"""A grader written against the docs before sealed grading: it runs plain git in the sandbox (the working
directory), as packs of that time do. Every git call's status and stderr are printed (tests read them)."""
import os
import subprocess
import sys


def git(*args):
    done = subprocess.run(["git", *args], capture_output=True, text=True)
    print(f"git {args[0]}: exit {done.returncode} {done.stderr.strip()}")
    return done


pristine = os.environ["AGENTIC_EVAL_PRISTINE"]
ignored = git("check-ignore", "-q", "build/out.log").returncode == 0
shown = git("show", f"{pristine}:config/settings.ini")
if shown.returncode != 0:
    sys.exit(3)
listed = git("ls-tree", "-r", "--name-only", pristine).stdout.split()
git("status", "--porcelain")
git("diff", "--stat")
untouched = False
if os.path.isfile("config/settings.ini") and not os.path.islink("config/settings.ini"):  # not a FIFO
    with open("config/settings.ini") as fh:
        untouched = fh.read() == shown.stdout
print(f"ignored={ignored} untouched={untouched} listed={listed}")
sys.exit(0 if ignored and untouched and listed == ["README.md", "config/settings.ini"] else 1)
