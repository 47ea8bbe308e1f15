"""The realpy pack's grader, one for every task (each task's grade.py calls `grade()`): the hidden tests that
caught the planted bug pass, from the grader's own renamed copy, and so does the rest of the project's suite; the
tests the model saw are untouched; and the calls the pristine suite made into the project (its twins: plain
arguments, recorded outcomes) give the same outcomes when made in the model's code, judged here rather than by a
test report."""

from gradelib import Call, Grader, Raises, Returns, make_calls, ref, task_vars


def grade() -> None:
    v = task_vars()
    g = Grader()
    g.unchanged([v["tests_dir"]])
    # the hidden tests first, alone (with canaries, every name new): an unfixed repo fails here, and the whole
    # suite, the costly part, is then skipped; then the twins (one process of calls), which catch a knowing forgery
    # of the test reports before the whole suite runs; the rest of the suite last
    hidden = len(v["require"])
    g.pytest_passes(v["hidden_select"], hidden_suite=v["hidden_tests"], require=v["require"], min_passed=hidden,
                    allow_skipped=True, pythonpath=v["pythonpath"], timeout=150,
                    what=f"the hidden test{'s' if hidden != 1 else ''} that caught the bug pass ({hidden})")

    twins = v["project_twins"]
    if twins and g.ok:  # a failed check already decides; the calls cost a process
        modules = sorted({t["module"] for t in twins})
        helpers = [*modules, "builtins", "datetime", "decimal"]  # "$N": the module imported by call N
        calls = [Call("import_module", [m]) for m in helpers]
        wants: list = [Returns()] * len(calls)

        def made(values: list) -> list:
            args = []
            for arg in values:  # a date, a duration, a Decimal: made in the model's process, passed on
                if isinstance(arg, dict) and "__realpy_object__" in arg:
                    module, name, made_of = arg["__realpy_object__"]
                    calls.append(Call(f"${helpers.index(module)}.{name}", made(made_of)))  # (its timezone first)
                    wants.append(Returns())
                    arg = ref(len(calls) - 1)
                args.append(arg)
            return args

        for t in twins:
            call = Call(f"${modules.index(t['module'])}.{t['function']}", made(t["args"]))
            if "method" in t:  # a method of what the call returned (parse.compile(fmt).parse(s))
                calls.append(call)
                wants.append(Returns())
                base = len(calls) - 1
                call = Call(f"${base}.{t['method']}", made(t["method_args"]))
            want = Raises(t["raises"]) if "raises" in t else t["repr"] if "repr" in t else t["returns"]
            if t["iter"]:  # an iterator: read into a list in the model's process (what it raises there counts)
                calls.append(call)
                wants.append(Returns())
                call = Call(f"${len(modules)}.list", [ref(len(calls) - 1)])
            if "repr" in t:  # an object: its repr, made in the model's process, compared here
                calls.append(call)
                wants.append(Returns())
                call = Call(f"${len(modules)}.repr", [ref(len(calls) - 1)])
            calls.append(call)
            wants.append(want)
        results = make_calls("importlib", calls, pythonpath=v["pythonpath"], timeout=90, fresh=True, sandbox=g.sandbox)
        wrong = [f"{c.target.split('.', 1)[-1]}{tuple(c.args)!r:.80}: {r.describe()[:120]}"
                 for c, w, r in zip(calls, wants, results) if not r.matches(w) and not isinstance(w, Returns)]
        g.check(f"{len(twins)} calls into {v['project']} give the pristine outcomes (judged in the grader)",
                not wrong, "; ".join(wrong[:3]))
    g.pytest_passes([v["tests_dir"]], min_passed=v["min_passed"] - hidden, allow_skipped=True, twins=[],
                    pythonpath=v["pythonpath"], timeout=150, what=f"the rest of the {v['project']} suite passes")
    g.finish()
