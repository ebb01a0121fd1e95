"""hvd.torch's start_timeline / stop_timeline (framework-neutral: hvd/timeline.py)."""
from hvd.timeline import start_timeline, stop_timeline  # noqa: F401
