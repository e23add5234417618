"""The defaults the hand-written solver pages (docs/solvers*.md) state in
prose ("`outer_step` = gamma, the x step. Default 0.05", "`lambda0`
(default 10)", "`hessian_inverse`: "exact" (default)", "None: xi = 20 x
`outer_step_scale`") are the code's: each is checked against its solver's
section of docs/defaults.md, generated from the solver classes
(tests/test_docs_links.py keeps it fresh). A statement belongs to the
solver of its heading, to each solver a heading lists ("...: SOBA, SABA",
"(SBCGI, SBCGF, CG-BiO)"), or to the solver of a row of solvers.md's
table; other tables (measurements) are not read."""
import re
from fractions import Fraction

from conftest import ROOT

PAGES = sorted((ROOT / "docs").glob("solvers*.md"))
# statements found per page (excluded ones not counted): a pattern that
# stops matching fails. Lower one only when a page drops a statement.
MIN_STATEMENTS = {"solvers.md": 2, "solvers_benchmark_bilevel.md": 15,
                  "solvers_huang.md": 9, "solvers_kwon_abolfazli.md": 30,
                  "solvers_simple.md": 36}
# (page, fragment of the statement's line, why it is no current default)
EXCLUDED = [
    ("solvers_kwon_abolfazli.md", "r = 1/2 (the default until now)",
     "history: F2SA's y_step_ratio before the fix"),
    ("solvers_kwon_abolfazli.md", "a `beta_factor` (default 10)",
     "history: TTSA's parameter removed on 2026-11-26"),
    ("solvers_benchmark_bilevel.md", "`n_inner_steps` = 100",
     "benchmark_bilevel's jaxopt_GD parameter, not one of ours"),
]
# a backticked name, not a problem's constant (mu_g, L_g, ...)
NAME = r"`(?!(?:outer_step_scale|mu_g|L_g\w*)`)(?P<n>\w+)`"
# a quoted string, None/True/False, 10 000, a number or an expression
# (1e-4, 1/L_g, 1/(2 L_g), ceil(...)), then maybe "x `outer_step_scale`"
VALUE = (r"""(?P<v>(?:`?"[^"`\n]+"`?|None|True|False|\d{1,3}(?: \d{3})+"""
         r"(?![\d.])|(?=\d|[A-Za-z_]\w*[/(])(?:[\w.^{}/*+-]"
         r"|\((?:[^()]|\([^()]*\))*\))+)"
         r"(?:\s+(?:x|times)\s+`outer_step_scale`)?)")
PATTERNS = [  # in a pattern without a name, the name is the letter just
    # before ("r = 1/2") or else the last backticked name before the value
    rf"{NAME}[^`]{{0,80}}?\b[Dd]efaults?(?: to| is)?\s+{VALUE}",  # default 1
    rf"\b[Dd]efault\s+`?(?P<n>\w+)`?\s*(?:=|is)\s+{VALUE}",  # default rho = 1
    # `n` = 32, `n`: 50, `n` = K = 1000, `n` = gamma: 1e-5, `n` r = 1; not
    # `n`: "a", "b" (the choices)
    rf"{NAME}(?:\s*=\s*\w+(?:\s*\([^()]*\))?\s*[:=]|\s*[:=]|\s+\w+\s*=)"
    rf"\s*(?!`?\"){VALUE}",
    rf"{NAME}(?:\s*=\s*\w+)?\s*\({VALUE}\)",  # `n` = gamma0 (0.01)
    rf"{NAME}\s+{VALUE}\s*\(",  # `batch_size` 64 (None: full passes)
    rf"{NAME}[^`]{{0,80}}?\bNone(?::| is)\s+(?:\w+\s*=\s*)?{VALUE}",
    rf"{VALUE}\s+by default",
    rf"{VALUE}\s*\((?:[^()]*,\s*)?(?:the\s+)?default\b",  # "a" (default)
]
# "Defaults (App. D): varsigma = 10, p = 1/2; ..." up to the sentence's end
LISTED = re.compile(r"(?:\bDefaults\b|Left at None).*?(?:\.(?=\s*$|\s+"
                    r"[A-Z][a-z])|$)", re.S)
PAIR = re.compile(rf"\b(?P<n>\w+)\s*=\s*{VALUE}")


def solver_tables():
    """{solver: {name: [default, rules]}} from docs/defaults.md (a step's
    rule also under its letter, a size's also under its parameter)."""
    tables, kind = {}, None
    page = ROOT / "docs" / "defaults.md"
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            table = tables[line[3:]] = {}
        elif line.startswith(("| parameter |", "| step |", "| size |")):
            kind = line.split()[1]
        elif line.startswith("| `"):
            cells = [c.strip("`") for c in line.strip("| ").split(" | ")]
            entry = table.setdefault(cells[0], [])
            entry.append(cells[3] if kind == "step" else cells[1])
            if kind == "step" and re.fullmatch(r"\w+", cells[1]):
                table.setdefault(cells[1], entry)
            if kind == "size" and cells[2] != cells[0]:
                table.setdefault(cells[2], []).append(cells[1])
    return tables


def sections(page, solvers):
    """(solvers, first line, text) of a page's sections and table rows."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found, start, names = [], 0, []
    for number, line in enumerate(lines + ["# end"]):
        if line.startswith("#"):
            found.append((names, start, "\n".join(lines[start:number])))
            title = line.lstrip("# ")  # a name, or "...: A, B" or "(A, B)"
            listed = re.search(r"(?:: |\()([^:()]+)\)?$", title)
            names = [n for n in [title, *(listed[1].split(", ") if listed
                                          else [])] if n in solvers]
            start = number + 1
        elif line.startswith("|"):
            lines[number] = ""
            row = re.match(r"\| \[`([^`]+)`\]", line)
            if row and row.group(1) in solvers:
                found.append(([row.group(1)], number, line))
    return found


def statements(page, solvers):
    """(line, solvers, name, value) of each default stated, per item."""
    for names, start, text in sections(page, solvers):
        # a paragraph or one list item (a line starting "- " or "* ")
        for block in re.finditer(r"[^\n]+(?:\n(?![-*] |\s*\n)[^\n]+)*",
                                 text):
            spans, prose = {}, block.group()
            for pattern in PATTERNS:
                for match in re.finditer(pattern, prose):
                    spans.setdefault(match.start("v"), match)
            # backticked spans blanked at their length: offsets stay put
            blanked = re.sub(r"`[^`]*`", lambda m: "`" + " " * (
                len(m[0]) - 2) + "`", prose)
            for listed in LISTED.finditer(blanked):
                for match in PAIR.finditer(listed.group()):
                    if any(match["n"] in solvers[n] for n in names):
                        spans[listed.start() + match.start("v")] = match
            for at, match in sorted(spans.items()):
                name = match.groupdict().get("n") or next(iter(
                    re.findall(r"(\w+)\s*=\s*$", prose[:at])
                    + re.findall(NAME, prose[:at])[-1:]), None)
                line = start + text[:block.start() + at].count("\n") + 1
                yield line, names, name, match["v"].rstrip(".")


def _normal(text):  # no quotes, "the problem's", spaces around operators
    text = re.sub(r"[`\"']|the problem's ", "", text).replace(" times ",
                                                              " x ")
    text = re.sub(r"\s*([/()+*^,={}])\s*", r"\1", " ".join(text.split()))
    return re.sub(r"(\d) ([a-z])", r"\1\2", text)


def _number(text):  # 0.5, 1/2, 1e-4, 10^5, 10 000; None if no number
    try:
        return float(Fraction(re.sub(r"^10\^", "1e", text.replace(" ", ""))))
    except (ValueError, ZeroDivisionError):
        return None


def agrees(stated, generated):
    """A number is one of ``generated``'s (to 4 digits: 2/7 is 0.2857),
    anything else is in it, both normalised."""
    number = _number(stated)
    if number is not None:
        tokens = re.findall(r"(?<![\w./])\d+(?:\.\d+)?(?:e-?\d+)?(?![\d./])",
                            generated)
        return any(f"{_number(t):.4g}" == f"{number:.4g}" for t in tokens)
    return re.search(rf"(?<![\w.]){re.escape(_normal(stated))}(?![\w.])",
                     _normal(generated)) is not None


def test_the_pages_state_the_code_defaults():
    tables = solver_tables()
    errors, counts, unused = [], {}, set(EXCLUDED)
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for line, names, name, stated in statements(page, tables):
            excluded = {e for e in EXCLUDED
                        if e[0] == page.name and e[1] in lines[line - 1]}
            if excluded:
                unused -= excluded
                continue
            counts[page.name] = counts.get(page.name, 0) + 1
            rules = {n: tables[n][name] for n in names if name in tables[n]}
            if not rules or not all(any(agrees(stated, r) for r in rule)
                                    for rule in rules.values()):
                errors.append(f"{page.name}:{line} {names or 'no solver'} "
                              f"`{name}`: stated {stated!r}, defaults.md "
                              f"{rules or 'has no such name'}")
    assert not errors, "\n".join(errors)
    short = {p: (counts.get(p, 0), n) for p, n in MIN_STATEMENTS.items()
             if counts.get(p, 0) < n}
    assert not short, f"too few statements found (found, expected): {short}"
    assert not unused, f"exclusions that match nothing: {unused}"
