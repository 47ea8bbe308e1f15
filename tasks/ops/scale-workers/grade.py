"""workers is the new count; the pool covers workers*threads and the database accepts every replica's pool."""


import ops_twins
from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged(["scripts", "tests", "config/deploy.yaml", "config/alerts.toml"])


def ini_int(rel: str, section: str, key: str) -> int | None:
    value = g.ini_value(rel, section, key)
    return int(value) if value is not None and value.strip().isdigit() else None


workers = ini_int("config/app.ini", "server", "workers")
threads = ini_int("config/app.ini", "server", "threads")
pool = ini_int("config/app.ini", "database", "pool_size")
limit = ini_int("config/postgres.ini", "limits", "max_connections")
reserved = ini_int("config/postgres.ini", "limits", "reserved_connections")
g.check(f"server.workers = {v['new_workers']}", workers == v["new_workers"], f"found {workers}")
g.check(f"server.threads still {v['threads']}", threads == v["threads"], f"found {threads}")
g.check(f"the pool covers {v['new_workers']} workers * {v['threads']} threads",
        pool is not None and pool >= v["new_workers"] * v["threads"], f"pool_size is {pool}")
g.check("reserved_connections unchanged", reserved == 10, f"found {reserved}")
g.check("the database accepts every replica's pool plus the reserve",
        None not in (pool, limit) and v["replicas"] * pool + 10 <= limit,  # type: ignore[operator]
        f"{v['replicas']} * {pool} + 10 > {limit}")
ops_twins.configs_agree(g, g.command_ok(["make", "check"], expect_output="config ok"))
g.finish()
