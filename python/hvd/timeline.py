"""Starting and stopping the timeline while the job runs (Horovod's hvd.start_timeline and
hvd.stop_timeline); HOROVOD_TIMELINE / HVD_TIMELINE start one at init."""
from hvd import _core


def start_timeline(file_path, mark_cycles=False):
    """Records every operation submitted from now on in a Chrome-trace JSON file: this
    rank's file is ``file_path`` on rank 0 and ``<stem>.rank<R><ext>`` on rank R (each rank
    writes its own, as with HOROVOD_TIMELINE). A timeline already running is closed first.
    ``mark_cycles`` adds a CYCLE_START mark per background cycle. Raises HvdError when the
    file cannot be opened, ValueError before init()."""
    if not _core.is_initialized():
        raise ValueError("Horovod has not been initialized; use hvd.init().")
    if not isinstance(file_path, str) or not file_path:
        raise ValueError(f"hvd.start_timeline: file_path must be a non-empty string, got {file_path!r}")
    _core.start_timeline(file_path, bool(mark_cycles))


def stop_timeline():
    """Stops recording; the events of every operation that finished before the call are in
    the file (valid JSON) when it returns. Without a running timeline it does nothing."""
    if not _core.is_initialized():
        raise ValueError("Horovod has not been initialized; use hvd.init().")
    _core.stop_timeline()
