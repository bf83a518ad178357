"""The memories screen: a user's memories as of the clocks, searchable, filterable, paged.

Browsing loads pages of :meth:`localmem.Store.read_page` (newest recorded first)
on a worker as the cursor or the scroll nears the end, so a user with a
million revisions opens and scrolls without waiting for all of them. A
search (``/``) runs :meth:`localmem.Store.search` with ``log=False``: looking
at memories must not change how they rank later.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import DataTable, Input, Static

from localmem import Hit, Revision, Store
from localmem.present import flags_text, interval, local_time, memory_text

from ..format import count
from ..widgets.paged_table import PagedTable, cell
from .base import ExportJob, ViewScreen

__all__ = ["MemoriesScreen", "PAGE", "SEARCH_LIMIT", "COLUMNS", "parse_filter", "revision_row"]

#: Rows per page: a few screens' worth, so the first paint is one small query and adding a page
#: to the table (its rows measured and the viewport rendered again) stays well under 100 ms.
PAGE = 100
#: How many hits a search shows (the best ones): a limit, not a total.
SEARCH_LIMIT = 100
#: The columns and their caps (None: the memory's text takes the width left).
#: Flags come right after the text: on a narrow terminal they matter more than the rest.
COLUMNS: list[tuple[str, int | None]] = [
    ("Memory", None), ("Flags", 24), ("Valid", 34), ("Key", 16), ("Kind", 10), ("Observed", 16),
    ("Recorded", 16)]


def parse_filter(text: str) -> tuple[str | None, str | None, str]:
    """Read the filter box: ``kind:goal`` and ``key:home_city`` narrow the read; other words filter the rows.

    Returns (kind, key, words): the words filter the loaded rows as they are
    typed (any column, any case); kind and key apply on Enter.
    """
    kind = key = None
    words = []
    for word in text.split():
        name, sep, value = word.replace("=", ":").partition(":")
        if sep and name == "kind":
            kind = value or None
        elif sep and name == "key":
            key = value or None
        else:
            words.append(word)
    return kind, key, " ".join(words)


def revision_row(rev: Revision) -> list[Text]:
    """The cells of one memory: text, flags, valid interval, key, kind, observed, recorded."""
    return [cell(t) for t in (
        memory_text(rev), flags_text(rev), interval(rev.valid), rev.key or "", rev.kind,
        local_time(rev.observed_at, rev.tz), local_time(rev.recorded_at, rev.tz))]


class MemoriesScreen(ViewScreen):
    """A user's memories as of the clocks, in a table."""

    TITLE = "Memories"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search", tooltip="Search the memories (BM25 × time × usage)",
                id="memories.search"),
        Binding("f", "filter", "Filter", tooltip="Filter by kind:… or key:…", id="memories.filter"),
        Binding("enter", "open", "History", show=False, id="memories.history"),
        Binding("t", "timeline", "Timeline", tooltip="The highlighted memory's key along valid time",
                id="memories.timeline"),
        Binding("c", "compare", "Compare", tooltip="This memory under two knowledge cutoffs",
                id="memories.compare"),
        Binding("s", "explain", "Scores", tooltip="Show the score breakdown of the highlighted hit",
                id="memories.scores"),
        Binding("escape", "clear", "Clear", tooltip="Clear the search and the filter", show=False,
                id="memories.clear"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._cursor: str | None = None
        self._rows: dict[str, Revision] = {}
        self._hits: dict[str, Hit] = {}
        self._query = ""
        self._kind: str | None = None
        self._key: str | None = None

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        with Horizontal(id="searchbar"):
            yield Input(placeholder="/ search, e.g. what did Sam eat last week", id="search")
            yield Input(placeholder="f filter: words, kind:…, key:…", id="filter")
        table = PagedTable(id="rows", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static("", id="explain", classes="panel hidden")
        yield from self.compose_footer()

    def on_mount(self) -> None:
        table = self.query_one(PagedTable)
        table.set_columns(COLUMNS)
        table.focus()
        super().on_mount()

    # -- loading --------------------------------------------------------------

    def reload(self) -> None:
        """Start over: the first page of the listing, or the search's hits."""
        table = self.query_one(PagedTable)
        table.clear_rows()
        table.has_more = False
        self._rows.clear()
        self._hits.clear()
        self._cursor = None
        view, source = self.view, self.lm.source
        if view.user is None or source is None:
            return
        known, valid = view.known(source.clock), view.valid(source.clock)
        filters = self._filter_tree()
        if self._query:
            query, user = self._query, view.user
            self.status(f"searching for {query!r}…")

            def search(store: Store) -> list[Hit]:
                return store.search(
                    query, user_id=user, known_at=known, valid_at=valid, current_only=view.current_only,
                    include_expired=view.show_expired, limit=SEARCH_LIMIT, log=False, filters=filters,
                )

            self.load(search, self._show_hits)
            return
        self.status("loading…")
        self.load(self._page_job(None), self._show_page)

    def _filter_tree(self) -> dict[str, Any] | None:
        terms: list[dict[str, Any]] = []
        if self._kind:
            terms.append({"kind": self._kind})
        if self._key:
            terms.append({"key": self._key})
        if not terms:
            return None
        return terms[0] if len(terms) == 1 else {"AND": terms}

    def _page_job(self, cursor: str | None) -> Any:
        view, source = self.view, self.lm.source
        assert view.user is not None and source is not None
        user, kind, key = view.user, self._kind, self._key
        known, valid = view.known(source.clock), view.valid(source.clock)

        def page(store: Store) -> tuple[list[Revision], str | None]:
            return store.read_page(
                user, known_at=known, valid_at=valid, current_only=view.current_only,
                include_expired=view.show_expired, include_retracted=view.show_retracted,
                kind=kind, key=key, after=cursor, limit=PAGE,
            )

        return page

    def _show_page(self, result: tuple[list[Revision], str | None]) -> None:
        revs, cursor = result
        table = self.query_one(PagedTable)
        rows = [(rev.memory_id, revision_row(rev)) for rev in revs if rev.memory_id not in self._rows]
        for rev in revs:
            self._rows[rev.memory_id] = rev
        table.add_cells(rows)
        self._cursor = cursor
        n = count(len(self._rows), "memory")
        if not self._rows:
            self.status(self._empty_text())
        elif cursor:
            self.status(f"{n} loaded, newest recorded first; more below (scroll to load)")
        else:
            self.status(f"{n}, newest recorded first")
        table.has_more = cursor is not None
        table.check_more()

    def _empty_text(self) -> str:
        view = self.view
        if view.user is not None and view.user not in self.lm.users:
            n = len(self.lm.users)
            return (f"user {view.user!r} has no memories in this store: u picks one of "
                    f"{count(n, 'user')} who do")
        hidden = [] if view.show_expired else ["x shows expired"]
        if not view.show_retracted:
            hidden.append("r retracted")
        if view.current_only:
            hidden.append("a every interval")
        return f"no memories for {view.user} as of these clocks ({', '.join(hidden) or 'nothing hidden'})"

    @on(PagedTable.NeedMore)
    def _more(self) -> None:
        if self._cursor is not None and not self._query:
            self.status(f"{count(len(self._rows), 'memory')} loaded, loading more…")
            self.load(self._page_job(self._cursor), self._show_page, new=False)

    def _show_hits(self, hits: list[Hit]) -> None:
        table = self.query_one(PagedTable)
        rows = []
        for hit in hits:
            rev = hit.revision
            if rev.memory_id in self._rows:
                continue
            self._rows[rev.memory_id] = rev
            self._hits[rev.memory_id] = hit
            rows.append((rev.memory_id, revision_row(rev)))
        table.add_cells(rows)
        if len(hits) >= SEARCH_LIMIT:
            self.status(f"the best {len(hits):,} hits for {self._query!r} (a search shows at most "
                        f"{SEARCH_LIMIT}; refine it for others)  s: scores, esc: clear")
        elif hits:
            self.status(f"{count(len(hits), 'hit')} for {self._query!r}, best first  "
                        "(s: score breakdown, esc: clear)")
        else:
            self.status(f"no hits for {self._query!r}")
        self._explain()

    # -- the highlighted row ---------------------------------------------------

    def current(self) -> Revision | None:
        """The memory under the cursor, if any."""
        table = self.query_one(PagedTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self._rows.get(key) if key is not None else None

    @on(DataTable.RowHighlighted)
    def _highlighted(self) -> None:
        self._explain()

    def _explain(self) -> None:
        panel = self.query_one("#explain", Static)
        rev = self.current()
        hit = self._hits.get(rev.memory_id) if rev else None
        if hit is None:
            panel.update("score breakdown: search first (/), then highlight a hit")
            return
        time = "-" if hit.time is None else f"{hit.time:.2f}"
        bm25 = "-" if hit.bm25 is None else f"{hit.bm25:.3f}"
        panel.update(
            f"score {hit.score:.3f} = text {hit.text:.2f} + time {time} + 0.5 × usage {hit.usage:.2f}"
            f"   (raw BM25 {bm25}; text is BM25 scaled among the candidates; time is how well the"
            " memory's valid time fits the query's time phrases; usage is past retrievals,"
            " read as of known_at)"
        )

    @on(DataTable.RowSelected)
    def _selected(self) -> None:
        self.action_open()

    # -- actions ---------------------------------------------------------------

    def action_search(self) -> None:
        """Focus the search box."""
        self.query_one("#search", Input).focus()

    def action_filter(self) -> None:
        """Focus the filter box."""
        self.query_one("#filter", Input).focus()

    @on(Input.Submitted, "#search")
    def _search(self, event: Input.Submitted) -> None:
        self._query = event.value.strip()
        self.query_one(PagedTable).focus()
        self.reload()

    @on(Input.Changed, "#filter")
    def _filter_typed(self, event: Input.Changed) -> None:
        _, _, words = parse_filter(event.value)
        table = self.query_one(PagedTable)
        if words == table.text_filter:
            return
        shown = table.apply_filter(words)
        if words:
            self.status(f"{count(shown, 'row')} of {table.loaded:,} loaded match {words!r} (esc clears)")
        self._explain()

    @on(Input.Submitted, "#filter")
    def _filter(self, event: Input.Submitted) -> None:
        kind, key, _ = parse_filter(event.value)
        self.query_one(PagedTable).focus()
        if (kind, key) != (self._kind, self._key):
            self._kind, self._key = kind, key
            self.reload()

    def action_clear(self) -> None:
        """Back to browsing: no search, no filter."""
        for box in self.query(Input).results(Input):
            box.value = ""
        table = self.query_one(PagedTable)
        if table.text_filter:
            table.apply_filter("")
        changed = bool(self._query or self._kind or self._key)
        self._query, self._kind, self._key = "", None, None
        self.query_one(PagedTable).focus()
        if changed:
            self.reload()

    def action_explain(self) -> None:
        """Show or hide the score breakdown panel."""
        self.query_one("#explain").toggle_class("hidden")
        self._explain()

    def action_open(self) -> None:
        """Open the highlighted memory's history."""
        rev = self.current()
        if rev is not None:
            self.lm.open_history(rev.memory_id)

    def action_timeline(self) -> None:
        """Open the timeline of the highlighted memory's key."""
        rev = self.current()
        if rev is None:
            return
        if rev.key is None:
            self.notify("this memory has no key: a timeline follows a key's values", severity="warning")
            return
        self.lm.open_timeline(rev.key)

    def action_compare(self) -> None:
        """Compare the highlighted memory under two knowledge cutoffs."""
        rev = self.current()
        if rev is not None:
            self.lm.open_compare(rev.memory_id)

    # -- copy and export -------------------------------------------------------

    def copy_choices(self) -> list[tuple[str, str]]:
        """The highlighted memory's id, its text, or its row (tab-separated)."""
        rev = self.current()
        if rev is None:
            return []
        row = "\t".join(c.plain for c in revision_row(rev))
        return [("memory id", rev.memory_id), ("text", memory_text(rev)), ("row", row)]

    def export_job(self) -> ExportJob | None:
        """The whole listing (or the search's hits) at the clocks, the filter's words applied."""
        view, source = self.view, self.lm.source
        if view.user is None or source is None:
            return None
        user, query, kind, key = view.user, self._query, self._kind, self._key
        known, valid = view.known(source.clock), view.valid(source.clock)
        filters = self._filter_tree()
        words = self.query_one(PagedTable).text_filter.lower().split()

        def keep(rev: Revision) -> bool:
            line = " ".join(c.plain for c in revision_row(rev)).lower()
            return all(w in line for w in words)

        def job(store: Store) -> list[dict[str, Any]]:
            if query:
                hits = store.search(query, user_id=user, known_at=known, valid_at=valid,
                                    current_only=view.current_only, include_expired=view.show_expired,
                                    limit=SEARCH_LIMIT, log=False, filters=filters)
                return [{**h.revision.to_dict(), "score": h.score} for h in hits if keep(h.revision)]
            revs = store.read(user, known_at=known, valid_at=valid, current_only=view.current_only,
                              include_expired=view.show_expired, include_retracted=view.show_retracted,
                              kind=kind, key=key)
            return [r.to_dict() for r in revs if keep(r)]

        return job
