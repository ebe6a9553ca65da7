"""The text of a report's entries for schemes that are not exact algorithms over Q: approximate
(border-rank), modular and complex ones, from their data as :func:`bilinear.report.report_data`
gives it.  None of them is ever compiled."""

from __future__ import annotations

from .verify.ring_modular import GIVEN_WITH_MOD

NOT_COMPILED = "not an exact algorithm over Q, so it is never compiled"


def approximate_status(data: dict) -> str:
    x = data["parameter"]
    if not data["holds_in_the_limit"]:
        return f"FAILED in the limit {x} → 0"
    if data["error_order"] is None:
        return f"holds for every {x} (not only in the limit {x} → 0)"
    return f"holds in the limit {x} → 0 only"


def approximate_text(data: dict) -> list[str]:
    x = data["parameter"]
    lines = [f"approximate scheme {data['name']} {data['shape']}: {approximate_status(data)}"]
    if data["holds_in_the_limit"] and data["error_order"] is None:
        lines.append(f"  Brent equations: hold for every {x}; substitute a value for {x} to get an exact algorithm")
    elif data["holds_in_the_limit"]:
        lines.append(
            f"  Brent equations: every C block equals its classical sum plus O({x}^{data['error_order']}): "
            f"an approximate (border-rank) scheme, exact only in the limit, for no fixed {x}"
        )
    if data["cancellation"]:
        lines.append(
            f"  single products carry up to {x}^-{data['cancellation']}, "
            f"so rounding errors grow like u·{x}^-{data['cancellation']} as {x} shrinks"
        )
    lines.append(f"  {NOT_COMPILED}")
    return lines


def modular_status(data: dict) -> str:
    p = data["modulus"]
    if not data["holds_modulo"]:
        return f"FAILED modulo {p}"
    if data["wrong_over_q"]:
        return f"holds modulo {p} only"
    return f"verified over Q (and so modulo {p})"


def modular_text(data: dict) -> list[str]:
    p = data["modulus"]
    lines = [f"modular scheme {data['name']} {data['shape']}: {modular_status(data)}"]
    if data["modulus_reason"]:
        lines.append(f"  modulus: {data['modulus_reason']}")
    if data["holds_modulo"] and data["wrong_over_q"]:
        lines.append(f"  Brent equations: hold modulo {p}; over Q {data['wrong_over_q']} C blocks are wrong (above)")
    if not data["ok"]:  # an exact scheme that fails modulo p (p divides a denominator) is still exact over Q
        lines.append(f"  {NOT_COMPILED}" if not data["exact_over_q"] else
                     f"  over Q it is an exact algorithm: {_read_over_q(data)} verifies and compiles")
    elif not data["wrong_over_q"]:  # the algorithm's figures are an exact algorithm's entry, shown over Q
        lines.append(f"  over Q it is an exact algorithm: {_read_over_q(data)} verifies with its figures (products, "
                     "additions, stability) and compiles")
    return lines


def _read_over_q(data: dict) -> str:
    """How to have a scheme claimed modulo p read as the exact algorithm it is: without --mod where
    --mod claimed it; else (its file's name or contents do) as the .bl file `bilinear import` writes."""
    if data["modulus_reason"] == f"{GIVEN_WITH_MOD} {data['modulus']}":  # --mod's alone, not the file's too
        return "without --mod it"
    return "the .bl file `bilinear import` writes of it"


def complex_status(data: dict) -> str:
    return "holds over Q(i) (complex rationals)" if data["holds_over_q_i"] else "FAILED over Q(i)"


def complex_text(data: dict) -> list[str]:
    lines = [f"complex scheme {data['name']} {data['shape']}: {complex_status(data)}"]
    if data["holds_over_q_i"]:
        lines.append("  Brent equations: hold exactly over Q(i), real and imaginary parts checked as integer tensors")
    lines.append(f"  not compiled: {data['why_not_compiled']}")
    return lines


def ring_details(data: dict) -> str:
    """What the text report says below such a scheme's status line (its modulus and why, an approximate
    scheme's error order and cancellation), in one line: the Markdown table's cell had dropped them."""
    text = {"approximate": approximate_text, "modular": modular_text, "complex": complex_text}[data["kind"]](data)
    return "; ".join(line.strip() for line in text[1:])
