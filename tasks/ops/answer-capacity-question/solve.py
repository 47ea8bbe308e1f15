"""Reference answer: read config/app.ini and config/deploy.yaml."""

import configparser
from pathlib import Path

import yaml

ini = configparser.ConfigParser()
ini.read("config/app.ini")
replicas = yaml.safe_load(Path("config/deploy.yaml").read_text(encoding="utf-8"))["replicas"]
pool = ini.getint("database", "pool_size")
Path("ANSWER.md").write_text(
    f"replicas: {replicas}\n"
    f"workers per replica: {ini.getint('server', 'workers')}\n"
    f"database pool per replica: {pool}\n"
    f"total connections of all replicas: {replicas * pool}\n"
    f"rotated log files kept: {ini.getint('logs', 'keep')}\n",
    encoding="utf-8",
)
