"""Text from outside (bot and player names, reasons, labels) as the CLI prints it.

rich reads a ``str`` cell or line as markup (``[red]`` recolours, ``[link=...]`` hides a
link) and passes terminal escape sequences through untouched, so a name could clear the
instructor's screen or forge a table. Every table the CLI prints is a :class:`SafeTable`,
whose string cells are cleaned (:func:`referee.text.names.display`: no escape sequence, no
control or bidi character, one line, capped) and wrapped in :class:`rich.text.Text`, which is
never read as markup. Lines printed with markup use :func:`esc` for every outside value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from referee.text.names import display

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.style import StyleType
    from rich.table import Column

#: A table cell's cap: ``owner/name@version`` fits (64 + 1 + 64 + 1 + 64).
MAX_CELL_CHARS = 200


def cell(value: object, max_chars: int = MAX_CELL_CHARS) -> Text:
    """``value`` as one clean line of plain text (never markup)."""
    return Text(display(str(value), max_chars))


def lines(values: list[str], max_chars: int = MAX_CELL_CHARS) -> Text:
    """Several clean lines in one cell (one per value)."""
    return Text("\n".join(display(v, max_chars) for v in values))


def esc(value: object, max_chars: int = MAX_CELL_CHARS) -> str:
    """``value`` cleaned and markup-escaped, for a line printed with markup."""
    return escape(display(str(value), max_chars))


class SafeTable(Table):
    """A rich table whose title, caption and string cells are outside text: each is cleaned
    and shown as plain text (rich renderables such as :class:`Text` pass as they are)."""

    def __init__(
        self,
        *headers: Column | str,
        title: str | None = None,
        caption: str | Text | None = None,
        show_lines: bool = False,
    ) -> None:
        super().__init__(
            *headers,
            title=cell(title) if title is not None else None,
            # A caption of several lines comes as :func:`lines` (already clean), kept as it is.
            caption=caption if isinstance(caption, Text | None) else cell(caption),
            show_lines=show_lines,
        )

    def add_row(
        self,
        *renderables: RenderableType | None,
        style: StyleType | None = None,
        end_section: bool = False,
    ) -> None:
        super().add_row(
            *(cell(r) if isinstance(r, str) else r for r in renderables),
            style=style,
            end_section=end_section,
        )
