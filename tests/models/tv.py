"""torchvision's model definitions on the CPU torch the suite uses.

The torchvision 0.28.0 wheel PyPI serves for torch 2.13 is a CUDA build: its
compiled ops (`torchvision._C`) do not load against the CPU torch, and
`import torchvision` then fails in `_meta_registrations.py` ("operator
torchvision::nms does not exist") while it registers fake kernels for them.
The model definitions are plain Python and need none of those ops, so for
the duration of the import `torch.library.register_fake` is a decorator
that returns its function unchanged. This is the one place that does it.
"""

import importlib
import sys


def torchvision():
    """The torchvision module (imported once, with the workaround above)."""
    if "torchvision" in sys.modules:
        return sys.modules["torchvision"]
    import torch
    saved = torch.library.register_fake

    def register_fake(*args, **kwargs):
        if args and callable(args[0]) and not isinstance(args[0], str):
            return args[0]  # used bare as @register_fake
        return lambda fn: fn

    torch.library.register_fake = register_fake
    try:
        return importlib.import_module("torchvision")
    finally:
        torch.library.register_fake = saved


def model(name, **kwargs):
    """torchvision.models.<name>(**kwargs) in eval mode, untrained weights
    (weights=None: nothing is downloaded)."""
    tv = torchvision()
    return getattr(tv.models, name)(weights=None, **kwargs).eval()
