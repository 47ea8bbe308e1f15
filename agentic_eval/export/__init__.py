"""Exports of a run for the field's tools: trajectories in ATIF (Harbor's Agent Trajectory Interchange Format)
and the run as an Inspect AI eval log (`inspect view`). docs/export.md says what each field holds.

    trials       a run's trials read back as steps, from their wire logs (shared by both formats)
    atif         one ATIF trajectory per trial
    inspect_log  one Inspect eval log per run
"""
