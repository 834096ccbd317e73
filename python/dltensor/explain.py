"""Why was my tensor refused? Explanations of the arguments that dltensor parameters refused.

Every extension module built with dltensor keeps, per thread, a short record of the arguments its
parameters refused (written only when one is refused). Binding libraries build their ``TypeError`` from
signatures alone, so the reasons are read here::

    import dltensor
    dltensor.explain(ext.scale, x, 2.0)   # calls ext.scale(x, 2.0); on a refusal, raises its TypeError
                                           # with a note per refused tensor argument:
    # TypeError: scale(): incompatible function arguments. ...
    # dltensor: argument `x` (numpy.ndarray) of overload 1: dtype float64, expected float32; ...

``dltensor.refusals()`` returns the raw records of the calling thread (oldest first);
``dltensor.last_refusal()`` the newest one, also for a refusal inside a wrapper's call.
"""
import re
import sys
import warnings

__all__ = ["explain", "refusals", "last_refusal", "Refusal", "BoundElsewhereWarning"]

# The end of an explanation whose attempt allowed no conversion (refusal.h: no_conversion_text). explain()
# narrows it: `.noconvert()` where no exact first pass ran (one overload) or where both passes refused the
# argument; the exact pass alone where only it did (the converting pass bound the argument, or never tried
# it: an earlier argument of the overload failed, or pybind11 skips an overload whose arguments are all
# `.noconvert()`).
_NO_CONVERSION = ", without conversion (.noconvert(), or the exact first pass of overloads)"
_NOCONVERT = ", and conversion is off (.noconvert())"
_FIRST_PASS = (" in the exact first pass of overloads only (the converting pass bound this argument or did not "
               "try it)")


class BoundElsewhereWarning(UserWarning):
    """``explain()``: a writable dltensor parameter refused an argument in the converting pass, and the call
    still succeeded, so a later overload took the argument with conversion allowed (a ``py::array_t``
    without ``.noconvert()`` writes into a temporary copy)."""


class Refusal:
    """One refused argument: the object's ``id``, its type name, the kind of mismatch, the explanation,
    and the signature text of the parameter that refused it (``forms``: every text under which a
    ``TypeError`` may list that parameter: pybind11 >= 3 lists a ``.noconvert()`` argument in its return
    form)."""

    __slots__ = ("object", "type", "kind", "explanation", "signature", "forms", "convert", "writable", "when")

    def __init__(self, record: dict):
        for name in ("object", "type", "kind", "explanation"):
            setattr(self, name, record[name])
        # whether the attempt allowed conversion, whether the parameter is writable, when (steady clock, ns);
        # None / 0 in the records of a module built with an older dltensor
        self.convert = record.get("convert")
        self.writable = record.get("writable")
        self.when = record.get("when", 0)
        forms = _signature_forms(record["signature"])
        self.signature = forms[0]
        self.forms = tuple(dict.fromkeys(forms))

    def __repr__(self):
        return f"Refusal({self.type}: {self.explanation})"


def _signature_forms(text: str) -> list:
    """The parameter's and the return's form of a signature text that holds both ("shared@parameter@return@"
    per difference, then what follows: dltensor/bindings/signature.h), else the text alone."""
    parts = text.split("@")
    if len(parts) == 1 or len(parts) % 3 != 1:
        return [text]
    shared, parameter, returned = parts[0::3], parts[1::3], parts[2::3]
    return [shared[0] + "".join(own + after for own, after in zip(side, shared[1:])) for side in (parameter, returned)]


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


def last_refusal():
    """The calling thread's newest refusal in any extension module built with dltensor (a ``Refusal``), or
    None: for a call that failed inside a wrapper, whose own arguments ``explain()`` does not see."""
    records = refusals()
    return max(records, key=lambda r: r.when) if records else None


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
    converting pass comes after the exact one). An element of a list, tuple or dict argument is named by its
    index or key. When no record matches an argument (a wrapper called the binding with objects of its
    own), each is described as a call inside this one."""
    last, exact = {}, {}
    for r in records:
        key = (r.object, r.forms)
        exact[key] = exact.get(key, 0) + (r.convert is False)
        last[key] = r
    positions, elements = {}, {}
    for i, a in enumerate(args):
        positions.setdefault(id(a), []).append(i)
    keywords = {id(v): k for k, v in kwargs.items()}
    for outer, a in [*enumerate(args), *kwargs.items()]:
        items = a.items() if isinstance(a, dict) else enumerate(a) if isinstance(a, (list, tuple)) else ()
        for index, e in items:
            elements.setdefault(id(e), (outer, index))
    overloads = _overloads(message)
    lines = []
    for (obj, forms), r in last.items():
        # A parameter's type text holds the refusing signature (also inside `Optional[...]` / `... | None`
        # for an optional parameter, and inside a container's type for an element).
        def holds(t, forms=forms):
            return any(f and f in t for f in forms)
        explanation = r.explanation
        if r.convert is False:
            # The exact pass tries each overload that has this parameter once: more refusals than those
            # overloads, and the converting pass refused it too (.noconvert()).
            having = sum(any(holds(t) for _, t in params) for _, params in overloads)
            once = len(overloads) > 1 and exact[obj, forms] <= max(having, 1)
            explanation = explanation.replace(_NO_CONVERSION, _FIRST_PASS if once else _NOCONVERT)
        direct = obj in positions or obj in keywords
        outer, index = (None, None) if direct else elements.get(obj, (None, None))
        if not direct and outer is None:
            continue  # a record of a call inside this one (below)
        where = []
        for number, params in overloads or [(None, [])]:
            at = [outer] if outer is not None else positions.get(obj, [])
            names = [keywords[obj]] if obj in keywords else [
                a if isinstance(a, str) else params[a][0] if a < len(params) else f"#{a + 1}" for a in at]
            matches = [n for n, t in params if holds(t) and n in names] if params else names
            for n in (matches or ([] if params else names)):
                label = f"argument `{n}`" if outer is None else f"element [{index!r}] of argument `{n}`"
                where.append(label + (f" of overload {number}" if len(overloads) > 1 else ""))
        label = ", ".join(where) if where else "an argument"
        lines.append(f"dltensor: {label} ({r.type}): {explanation}")
    if not lines:  # a wrapper's call inside the one explained: its arguments are not these
        lines = [f"dltensor: an argument of a call inside this one ({r.type}): {r.explanation}"
                 for r in last.values()]
    return lines


def _warn_bound_elsewhere(records, args, kwargs) -> None:
    """After explain()'s call succeeded: a writable parameter's converting-pass refusal of one of its
    arguments means that another overload took that argument with conversion allowed."""
    ids = {id(a) for a in [*args, *kwargs.values()]}
    for r in records:
        if r.writable and r.convert and r.object in ids:
            warnings.warn(f"dltensor: a writable parameter refused an argument ({r.type}: {r.explanation}), "
                          "and another overload of the function took it with conversion allowed: if that "
                          "overload converts (py::array_t without .noconvert()), its writes went to a copy",
                          BoundElsewhereWarning, stacklevel=3)
            return


def explain(function, *args, **kwargs):
    """Calls ``function(*args, **kwargs)`` and returns its result. When the call raises a ``TypeError``
    after dltensor parameters refused arguments, the same exception is raised again with one note per
    refused tensor argument (``add_note``; before Python 3.11 the lines are appended to the message)."""
    refusals(clear=True)
    try:
        result = function(*args, **kwargs)
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
    _warn_bound_elsewhere(refusals(), args, kwargs)
    return result
