"""A tuning in pieces (``--solver NAME ... --update``): the entries named
are tuned, every other entry keeps its tuned value, its header line of
values run and its score table from the tuned config already at
``--output``, so a tuning too long for one sitting runs a few solvers at a
time (each piece committed as it finishes), or one entry is tuned again
without re-running the others.

Two pieces must be one tuning: the same source config, budget, tuning
seeds and instances, grid rule and criterion (the header lines in
``SHARED``); a difference is refused before any run. The tuned config's
header names each earlier piece (its command, date and cost)."""
import re
from dataclasses import dataclass, field

import yaml

from benchmark_utils.tuning.config_io import format_entry, parse_entry

# header lines that two pieces of one tuning share (read up to the
# widening limit: each piece's rounds are in its own tables)
SHARED = ("From:", "Budget:", "Tuning seeds:", "Tuning instances:", "Grid:",
          "Criterion")
PIECE_LINES = ("Tuned by:", "Date:", "Tuning cost:")
EARLIER = "Earlier piece:"
NOT_SELECTED = "not selected by --solver"


def entry_text(entry):
    """An entry as the tuned config's header and score table name it."""
    return entry if isinstance(entry, str) else format_entry(
        *parse_entry(entry))


# the selection rule that tunings before its own "Selection:" line wrote
# at the end of their criterion line (a piece compares criteria without it)
OLD_SELECTION = ("; ranges [min, max] overlapping the best's tie, ties to "
                 "the default, else to the smaller steps")


def _shared(line):
    return re.sub(r"; widened at most \d+ round\(s\)", "",
                  line).removesuffix(OLD_SELECTION)


@dataclass
class Earlier:
    """What the existing tuned config holds, per entry text."""
    entries: list                    # its tuned entries, in config order
    header: list                     # its header lines
    grid_lines: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)
    reasons: dict = field(default_factory=dict)   # kept as they are

    def piece_lines(self):
        """The header lines naming the earlier pieces (theirs first)."""
        own = {key: next((line[len(key):].strip() for line in self.header
                          if line.startswith(key)), "")
               for key in PIECE_LINES}
        return [*(line for line in self.header if line.startswith(EARLIER)),
                f"{EARLIER} {own['Tuned by:']} ({own['Date:']}; "
                f"{own['Tuning cost:'] or 'cost not stated'}; its tables "
                f"here: {', '.join(sorted(self.tables)) or 'none'})"]

    def check_shared(self, header_lines, output):
        """ValueError naming the line where this piece and the existing
        tuning differ (another config, budget, seeds, grid or criterion)."""
        for key in SHARED:
            mine = [_shared(line) for line in header_lines
                    if line.startswith(key)]
            theirs = [_shared(line) for line in self.header
                      if line.startswith(key)]
            if mine != theirs:
                raise ValueError(
                    f"--update: this tuning and the one at {output} differ "
                    f"in their '{key}' line (one tuning in pieces must share"
                    f" it): {theirs[0] if theirs else 'none'!r} there, "
                    f"{mine[0] if mine else 'none'!r} here; tune to another"
                    " --output, or without --update")


def read_earlier(output, entries):
    """The tuning at ``output`` (an :class:`Earlier`); ValueError where
    there is none or its entries are not the config's."""
    scores = output.with_name(f"{output.stem}_scores.md")
    if not output.is_file() or not scores.is_file():
        raise ValueError(f"--update continues the tuning at {output}, which "
                         "has no tuned config and score table there; tune "
                         "without --update first")
    text = output.read_text()
    header = [line[2:] for line in text.splitlines()
              if line.startswith("# ")]
    tuned = yaml.safe_load(text).get("solver") or []
    names = [entry_text(e) for e in entries]
    if [parse_entry(e)[0] for e in tuned] != [parse_entry(e)[0]
                                              for e in entries]:
        raise ValueError(f"--update: the tuned config at {output} lists "
                         f"other solvers than the config ({tuned} against "
                         f"{names}); tune without --update")
    earlier = Earlier(entries=list(tuned), header=header)
    for name in names:
        line = next((line for line in header
                     if line.startswith(f"  {name}: ")), None)
        if line is not None:
            earlier.grid_lines[name] = line
    for section in scores.read_text().split("\n### ")[1:]:
        title, *rest = section.split("\n")
        if title == "Kept as they are":
            for found in re.finditer(r"^- `(.*)`: (.*)$", section, re.M):
                earlier.reasons[found.group(1)] = found.group(2)
        elif title in names:
            earlier.tables[title] = [f"### {title}", *rest]
    return earlier
