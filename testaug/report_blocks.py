"""Report content as blocks (headings, text, tables, images), rendered to Markdown with image
files beside it, or to one self-contained HTML page with the images inlined."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Table:
    columns: Sequence[str]
    rows: Sequence[Sequence[str]]
    caption: str = ""


@dataclass(frozen=True)
class Image:
    """A PNG: its bytes, a file name for the Markdown copy, and what it shows."""

    png: bytes
    name: str
    alt: str


Block = Heading | Text | Table | Image


@dataclass
class Report:
    """A titled list of blocks."""

    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, *blocks: Block) -> None:
        self.blocks.extend(blocks)


def render_markdown(report: Report, path: Path, images_dir: Path) -> list[Path]:
    """Write report.md and its images (into `images_dir`); returns the image paths."""
    lines = [f"# {report.title}", ""]
    written = []
    for block in report.blocks:
        if isinstance(block, Heading):
            lines += [f"{'#' * block.level} {block.text}", ""]
        elif isinstance(block, Text):
            lines += [block.text, ""]
        elif isinstance(block, Table):
            if block.caption:
                lines += [f"*{block.caption}*", ""]
            lines.append("| " + " | ".join(_md(c) for c in block.columns) + " |")
            lines.append("|" + "|".join("---" for _ in block.columns) + "|")
            lines += ["| " + " | ".join(_md(cell) for cell in row) + " |" for row in block.rows]
            lines.append("")
        else:
            images_dir.mkdir(parents=True, exist_ok=True)
            image_path = images_dir / block.name
            image_path.write_bytes(block.png)
            written.append(image_path)
            relative = image_path.relative_to(path.parent).as_posix()
            lines += [f"![{block.alt}]({relative})", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return written


def render_html(report: Report, path: Path) -> None:
    """Write one HTML file with everything inline (styles and images)."""
    body = [f"<h1>{html.escape(report.title)}</h1>"]
    for block in report.blocks:
        if isinstance(block, Heading):
            level = min(max(block.level, 2), 4)
            body.append(f"<h{level}>{html.escape(block.text)}</h{level}>")
        elif isinstance(block, Text):
            body.append(f"<p>{html.escape(block.text)}</p>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{html.escape(c)}</th>" for c in block.columns)
            rows = "".join(
                "<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in row) + "</tr>"
                for row in block.rows
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
</style></head>
<body>
{chr(10).join(body)}
</body></html>
"""
    path.write_text(page, encoding="utf-8")


def _md(cell: object) -> str:
    return str(cell).replace("|", "\\|").replace("\n", " ")
