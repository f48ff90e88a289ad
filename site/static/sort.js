// Sortable tables without dependencies: click a header to sort by that column.
// Cells may carry data-sort (a number, or "" for missing values, which always sort last).
(function () {
  "use strict";
  function key(cell) {
    if (!cell) return { missing: true, v: "" };
    var raw = cell.getAttribute("data-sort");
    if (raw === null) raw = cell.textContent.trim();
    if (raw === "" || raw === "-") return { missing: true, v: "" };
    var n = Number(raw);
    return isNaN(n) ? { missing: false, v: raw.toLowerCase(), text: true } : { missing: false, v: n };
  }
  function sortTable(table, col, th) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var current = th.getAttribute("aria-sort");
    var first = th.getAttribute("data-first") || "ascending";
    var dir = current ? (current === "ascending" ? "descending" : "ascending") : first;
    var sign = dir === "ascending" ? 1 : -1;
    rows.sort(function (a, b) {
      var ka = key(a.cells[col]), kb = key(b.cells[col]);
      if (ka.missing || kb.missing) return ka.missing === kb.missing ? 0 : (ka.missing ? 1 : -1);
      if (ka.text || kb.text) return sign * String(ka.v).localeCompare(String(kb.v));
      return sign * (ka.v - kb.v);
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir);
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var tables = document.querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (table) {
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
        th.setAttribute("title", (th.getAttribute("title") || "") + " (click to sort)");
        th.addEventListener("click", function () { sortTable(table, i, th); });
      });
    });
  });
})();
