"""Python side of the test producer (tests/producer.cpp, ``m.common.producer_capsule``): capsules with any
DLPack field, and objects whose ``__dlpack__`` returns them, raises, or returns garbage. ``m`` is the test
module (the root)."""

FLOAT32 = (2, 32, 1)
FLOAT64 = (2, 64, 1)


def capsule(m, storage, **spec):
    """A DLPack capsule over ``storage`` (a buffer, or None) described by ``spec`` (see producer.cpp)."""
    return m.common.producer_capsule(storage, spec)


class Exporter:
    """A modern producer: ``__dlpack__(max_version=...)`` returns a versioned capsule when asked."""

    def __init__(self, m, storage, **spec):
        self.m, self.storage, self.spec = m, storage, spec
        self.calls = []

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append(max_version)
        spec = dict(self.spec)
        spec.setdefault("versioned", max_version is not None and max_version[0] >= 1)
        return self.m.common.producer_capsule(self.storage, spec)

    def __dlpack_device__(self):
        return tuple(self.spec.get("device", (1, 0)))


class LegacyExporter(Exporter):
    """A producer predating DLPack 1.0: ``__dlpack__`` takes no ``max_version`` (TypeError if given)."""

    def __dlpack__(self, stream=None):
        self.calls.append(None)
        return self.m.common.producer_capsule(self.storage, dict(self.spec, versioned=False))


class Raising:
    """``__dlpack__`` raises."""

    def __init__(self, exc):
        self.exc = exc

    def __dlpack__(self, **kwargs):
        raise self.exc

    def __dlpack_device__(self):
        return (1, 0)


class Returning:
    """``__dlpack__`` returns whatever it was given."""

    def __init__(self, value):
        self.value = value

    def __dlpack__(self, **kwargs):
        return self.value

    def __dlpack_device__(self):
        return (1, 0)
