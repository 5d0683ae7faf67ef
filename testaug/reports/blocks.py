"""Report content as blocks (headings, text, tables, images), rendered to Markdown with image
files beside it, or to one self-contained HTML page with the images inlined. A table row can
carry a mark (a warning such as "unverified: ..."): a badge and a distinct style in HTML,
the same words in Markdown. Every text in report.md is escaped so that text copied from
data cannot add HTML (`<` and `&` as entities, which is all a tag, an autolink or an
entity needs) or break a table (pipes escaped, line breaks as spaces)."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from testaug.core.runs import own_folder, write_bytes_atomic, write_text_atomic


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Text:
    text: str
    notice: bool = False  # a caveat the reader must not miss: set apart


@dataclass(frozen=True)
class Table:
    """Rows of strings; `marks[i]`, where given, is a warning about row i; `tones[i]`, where
    given, a CSS colour for row i's text in HTML (e.g. fixed green, broken red);
    `cell_tones[i][j]`, where given, a colour for the one cell (j) of row i."""

    columns: Sequence[str]
    rows: Sequence[Sequence[str]]
    caption: str = ""
    marks: Sequence[str | None] = ()
    tones: Sequence[str | None] = ()
    cell_tones: Sequence[Sequence[str | None]] = ()

    def cell_tone(self, row: int, column: int) -> str | None:
        """The colour of one cell, if any."""
        if row >= len(self.cell_tones) or column >= len(self.cell_tones[row]):
            return None
        return self.cell_tones[row][column]

    def mark(self, index: int) -> str | None:
        """Row `index`'s mark, if any."""
        return self.marks[index] if index < len(self.marks) else None


@dataclass(frozen=True)
class Image:
    """A PNG: its bytes, a file name for the Markdown copy, and what it shows."""

    png: bytes
    name: str
    alt: str


@dataclass(frozen=True)
class Html:
    """An already-escaped HTML fragment for report.html (interactive content); report.md
    renders the `markdown` blocks in its place."""

    fragment: str
    markdown: tuple[Heading | Text | Table | Image, ...] = ()


Block = Heading | Text | Table | Image | Html


@dataclass
class Report:
    """A titled list of blocks."""

    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, *blocks: Block) -> None:
        self.blocks.extend(blocks)


def render_markdown(report: Report, path: Path, images_dir: Path) -> list[Path]:
    """Write report.md and its images (into `images_dir`), each file atomically and never
    through a symbolic link; returns the image paths."""
    lines = [f"# {_md_line(report.title)}", ""]
    written = []
    for block in _markdown_blocks(report.blocks):
        if isinstance(block, Heading):
            lines += [f"{'#' * block.level} {_md_line(block.text)}", ""]
        elif isinstance(block, Text):
            text = _md_text(block.text)
            lines += [f"> **Note:** {_md_line(block.text)}" if block.notice else text, ""]
        elif isinstance(block, Table):
            if block.caption:
                lines += [f"*{_md_line(block.caption)}*", ""]
            lines.append("| " + " | ".join(_md(c) for c in block.columns) + " |")
            lines.append("|" + "|".join("---" for _ in block.columns) + "|")
            for index, row in enumerate(block.rows):
                cells = [_md(cell) for cell in row]
                mark = block.mark(index)
                if mark and cells:
                    cells[0] += f" **[{_md(mark)}]**"
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
        else:
            if not written:
                own_folder(images_dir)
            image_path = images_dir / block.name
            write_bytes_atomic(image_path, block.png)
            written.append(image_path)
            relative = image_path.relative_to(path.parent).as_posix()
            alt = _md_line(block.alt).replace("[", "\\[").replace("]", "\\]")
            lines += [f"![{alt}]({quote(relative)})", ""]
    write_text_atomic(path, "\n".join(lines))
    return written


def render_html(report: Report, path: Path) -> None:
    """Write one HTML file with everything inline (styles and images), atomically and never
    through a symbolic link."""
    body = [f"<h1>{html.escape(report.title)}</h1>"]
    for block in report.blocks:
        if isinstance(block, Heading):
            level = min(max(block.level, 2), 4)
            body.append(f"<h{level}>{html.escape(block.text)}</h{level}>")
        elif isinstance(block, Text):
            notice = ' class="notice"' if block.notice else ""
            body.append(f"<p{notice}>{html.escape(block.text)}</p>")
        elif isinstance(block, Html):
            body.append(block.fragment)
        elif isinstance(block, Table):
            head = "".join(f"<th>{html.escape(c)}</th>" for c in block.columns)
            rows = "".join(
                _html_row(
                    row,
                    block.mark(i),
                    block.tones[i] if i < len(block.tones) else None,
                    [block.cell_tone(i, j) for j in range(len(row))],
                )
                for i, row in enumerate(block.rows)
            )
            caption = f"<caption>{html.escape(block.caption)}</caption>" if block.caption else ""
            body.append(
                f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
            )
        else:
            data = base64.b64encode(block.png).decode("ascii")
            body.append(
                f'<figure><img alt="{html.escape(block.alt)}" src="data:image/png;base64,{data}"/>'
                f"<figcaption>{html.escape(block.alt)}</figcaption></figure>"
            )
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(report.title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }}
th, td {{ border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }}
th {{ background: #f3f3f3; }}
caption {{ caption-side: top; text-align: left; font-style: italic; padding-bottom: 0.3em; }}
img {{ max-width: 100%; }}
figcaption {{ font-size: 0.85em; color: #555; }}
tr.marked td {{ background: #fff4e0; color: #6b4a00; font-style: italic; }}
.badge {{ display: inline-block; margin-left: 0.4em; padding: 0 0.4em; border-radius: 0.6em;
  background: #b36b00; color: white; font-size: 0.8em; font-style: normal; }}
p.notice {{ border-left: 4px solid #b36b00; background: #fff4e0; padding: 0.5em 0.8em; }}
</style></head>
<body>
{chr(10).join(body)}
</body></html>
"""
    write_text_atomic(path, page)


def _markdown_blocks(blocks: Sequence[Block]) -> list[Heading | Text | Table | Image]:
    """The blocks as Markdown renders them: an Html block's Markdown stand-ins in its place."""
    flat: list[Heading | Text | Table | Image] = []
    for block in blocks:
        flat.extend(block.markdown if isinstance(block, Html) else (block,))
    return flat


def _html_row(
    row: Sequence[str],
    mark: str | None,
    tone: str | None = None,
    cell_tones: Sequence[str | None] = (),
) -> str:
    """A table row; a marked one gets the class `marked` and its mark as a badge, a toned
    one its colour, a toned cell its own."""
    cells = [html.escape(str(cell)) for cell in row]
    if mark and cells:
        cells[0] += f' <span class="badge">{html.escape(mark)}</span>'
    opening = f'<tr class="marked"{_colour(tone)}>' if mark else f"<tr{_colour(tone)}>"
    tones = list(cell_tones) + [None] * (len(cells) - len(cell_tones))
    return (
        opening
        + "".join(f"<td{_colour(t)}>{cell}</td>" for cell, t in zip(cells, tones, strict=True))
        + "</tr>"
    )


def _colour(tone: str | None) -> str:
    """A style attribute giving text this colour in bold, or nothing."""
    return f' style="color: {html.escape(tone)}; font-weight: bold"' if tone else ""


def _md_text(text: object) -> str:
    """Text for report.md: `&` and `<` as HTML entities, so no tag, autolink or entity
    copied from data reaches a renderer that allows HTML (`>` alone opens nothing, and
    stays readable in arrows such as "IID->T")."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;")


def _md_line(text: object) -> str:
    """Text for one line of report.md (a heading, a note, a caption): escaped, its line
    breaks as spaces."""
    return " ".join(_md_text(text).splitlines())


def _md(cell: object) -> str:
    """A table cell of report.md: escaped, on one line, its pipes escaped."""
    return _md_line(cell).replace("|", "\\|")
