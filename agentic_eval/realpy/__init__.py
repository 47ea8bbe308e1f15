"""Tasks from real Python projects: a bug planted per seed, the catching tests hidden (issue 43)."""
