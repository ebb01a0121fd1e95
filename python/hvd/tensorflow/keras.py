"""hvd.tensorflow.keras: the same module as hvd.keras (Horovod's horovod.tensorflow.keras).
Importing it binds the name to hvd.keras itself, and its submodules to hvd.keras's, so that
classes and state are the same objects whichever name a script uses."""
import sys

import hvd.keras as _keras

sys.modules[__name__] = _keras
for _sub in ("callbacks", "optimizer", "elastic"):
    if hasattr(_keras, _sub):
        sys.modules[f"{__name__}.{_sub}"] = getattr(_keras, _sub)
