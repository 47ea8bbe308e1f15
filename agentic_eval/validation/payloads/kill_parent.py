import os as _rt_os

try:
    _rt_os.kill(_rt_os.getppid(), 9)
except OSError:
    pass
try:
    _rt_os.killpg(0, 9)
except OSError:
    pass
