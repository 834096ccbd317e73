"""Why was my tensor refused? Explanations of the arguments that dltensor parameters refused.

Every extension module built with dltensor keeps, per thread, a short record of the arguments its
parameters refused (written only when one is refused). Binding libraries build their ``TypeError`` from
signatures alone, so the reasons are read here::

    import dltensor
    dltensor.explain(ext.scale, x, 2.0)   # calls ext.scale(x, 2.0); on a refusal, raises its TypeError
                                           # with a note per refused tensor argument:
    # TypeError: scale(): incompatible function arguments. ...
    # dltensor: argument `x` (numpy.ndarray) of overload 1: dtype float64, expected float32; ...

``dltensor.refusals()`` returns the raw records of the calling thread (oldest first).
"""
import re
import sys

__all__ = ["explain", "refusals", "Refusal"]


class Refusal:
    """One refused argument: the object's ``id``, its type name, the kind of mismatch, the explanation,
    and the signature text of the parameter that refused it (``forms``: every text under which a
    ``TypeError`` may list that parameter: pybind11 >= 3 lists a ``.noconvert()`` argument in its return
    form)."""

    __slots__ = ("object", "type", "kind", "explanation", "signature", "forms")

    def __init__(self, record: dict):
        for name in ("object", "type", "kind", "explanation"):
            setattr(self, name, record[name])
        # "...@parameter type@return type@..." (dltensor/signature.h) where the backend names both forms
        text = record["signature"]
        m = re.fullmatch(r"([^@]*)@([^@]*)@([^@]*)@([^@]*)", text)
        forms = [m.group(1) + m.group(2) + m.group(4), m.group(1) + m.group(3) + m.group(4)] if m else [text]
        self.signature = forms[0]
        self.forms = tuple(dict.fromkeys(forms))

    def __repr__(self):
        return f"Refusal({self.type}: {self.explanation})"


def _readers():
    module = sys.modules.get("_dltensor_refusals")
    return list(getattr(module, "readers", ())) if module else []


def refusals(clear: bool = False) -> list:
    """This thread's recent refusals, from every extension module built with dltensor (oldest first within
    a module); ``clear`` forgets them after reading."""
    out = []
    for reader in _readers():
        out.extend(Refusal(r) for r in reader(clear))
    return out


def _split_top_level(text: str) -> list:
    """Splits a parameter list at commas outside brackets and quotes."""
    parts, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(text):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def _overloads(message: str) -> list:
    """[(number, [(name, type text), ...])] of the overloads listed in a binding library's TypeError."""
    out = []
    for m in re.finditer(r"^\s*(\d+)\. (?:\w+)?\((.*)\) -> .*$", message, re.M):  # pybind11 omits the name
        params = []
        for p in _split_top_level(m.group(2)):
            name, _, annotation = p.partition(": ")
            params.append((name.strip(), annotation.split(" = ")[0].strip()))
        out.append((int(m.group(1)), params))
    return out


def _describe(records, args, kwargs, message) -> list:
    """One line per refused argument and overload: the last record of each (object, parameter) pair (the
    converting pass comes after the exact one)."""
    last = {}
    for r in records:
        last[(r.object, r.forms)] = r
    positions = {}
    for i, a in enumerate(args):
        positions.setdefault(id(a), []).append(i)
    keywords = {id(v): k for k, v in kwargs.items()}
    overloads = _overloads(message)
    lines = []
    for (obj, forms), r in last.items():
        where = []
        for number, params in overloads or [(None, [])]:
            names = [keywords[obj]] if obj in keywords else [
                params[i][0] if i < len(params) else f"#{i + 1}" for i in positions.get(obj, [])]
            # The parameter's type text holds the refusing signature (also inside `Optional[...]` /
            # `... | None` for an optional parameter).
            matches = [n for n, t in params if any(f and f in t for f in forms) and n in names] if params else names
            for n in (matches or ([] if params else names)):
                where.append(f"argument `{n}`" + (f" of overload {number}" if len(overloads) > 1 else ""))
        if not where and obj not in positions and obj not in keywords:
            continue  # a refusal from another call
        label = ", ".join(where) if where else "an argument"
        lines.append(f"dltensor: {label} ({r.type}): {r.explanation}")
    return lines


def explain(function, *args, **kwargs):
    """Calls ``function(*args, **kwargs)`` and returns its result. When the call raises a ``TypeError``
    after dltensor parameters refused arguments, the same exception is raised again with one note per
    refused tensor argument (``add_note``; before Python 3.11 the lines are appended to the message)."""
    refusals(clear=True)
    try:
        return function(*args, **kwargs)
    except TypeError as error:
        # Only overload resolution's own TypeError lists refused arguments: one raised by a function body
        # (after an earlier overload refused) is left as it is. The records stay for refusals().
        if "incompatible function arguments" not in str(error):
            raise
        lines = _describe(refusals(), args, kwargs, str(error))
        if not lines:
            raise
        if hasattr(error, "add_note"):
            for line in lines:
                error.add_note(line)
            raise
        raise TypeError("\n".join([str(error), *lines])) from error
