from pathlib import Path


def test_status_is_ready() -> None:
    assert Path("/app/status.txt").read_text().strip() == "ready"
