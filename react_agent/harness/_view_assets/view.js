// react-agent run view: filtering, sorting, expand/collapse. The page reads fully without it.
// Data comes from the JSON block (JSON.parse) and is only ever written as text (textContent).
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var block = document.getElementById("view-data");
  var data = block ? JSON.parse(block.textContent) : { mode: "run", entries: [] };
  var main = document.querySelector("main");
  Array.prototype.forEach.call(document.querySelectorAll("[data-js]"), function (el) {
    el.hidden = false;
  });

  function all(selector, scope) {
    return Array.prototype.slice.call((scope || document).querySelectorAll(selector));
  }
  function shown(el) { return el.offsetParent !== null || el.getClientRects().length > 0; }

  // -- expand / collapse, steps with problems only --------------------------------------
  function scope() {
    var open = all(".run").filter(shown);
    return open.length ? open : [main];
  }
  function setOpen(value) {
    scope().forEach(function (s) { all("details", s).forEach(function (d) { d.open = value; }); });
  }
  all("[data-act=expand]").forEach(function (b) { b.addEventListener("click", function () { setOpen(true); }); });
  all("[data-act=collapse]").forEach(function (b) { b.addEventListener("click", function () { setOpen(false); }); });
  var problemsOnly = document.getElementById("only-problems");
  if (problemsOnly) {
    problemsOnly.addEventListener("change", function () {
      all("details.step").forEach(function (d) {
        d.hidden = problemsOnly.checked && !d.classList.contains("problem") &&
          !d.classList.contains("noted");
      });
      all(".timeline li").forEach(function (li) {
        li.hidden = problemsOnly.checked && !li.classList.contains("problem") &&
          !li.classList.contains("noted");
      });
    });
  }

  if (data.mode !== "index") { return; }

  // -- the index: filter and sort --------------------------------------------------------
  var rows = all("table.runs tbody tr");
  var text = document.getElementById("f-text");
  var status = document.getElementById("f-status");
  var passed = document.getElementById("f-passed");
  var shape = document.getElementById("f-shape");
  var count = document.getElementById("f-count");
  function entry(row) { return data.entries[Number(row.getAttribute("data-i"))] || {}; }
  function filter() {
    var words = (text.value || "").toLowerCase().split(/\s+/).filter(Boolean);
    var n = 0;
    rows.forEach(function (row) {
      var e = entry(row);
      var ok = words.every(function (w) { return (e.search || "").indexOf(w) >= 0; }) &&
        (!status.value || e.status === status.value) &&
        (!passed.value || String(e.passed) === passed.value) &&
        (!shape.value || e.shape === shape.value);
      row.hidden = !ok;
      if (ok) { n += 1; }
    });
    count.textContent = n + " of " + rows.length + " shown";
  }
  [text, status, passed, shape].forEach(function (el) {
    el.addEventListener("input", filter);
    el.addEventListener("change", filter);
  });
  filter();

  all("table.runs th[data-sort]").forEach(function (th) {
    th.addEventListener("click", function () {
      var key = th.getAttribute("data-sort");
      var down = th.getAttribute("aria-sort") === "ascending";
      all("table.runs th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      var body = rows.length ? rows[0].parentNode : null;
      rows.slice().sort(function (a, b) {
        var x = entry(a)[key], y = entry(b)[key];
        if (x === null || x === undefined) { x = ""; }
        if (y === null || y === undefined) { y = ""; }
        var c = (typeof x === "number" && typeof y === "number") ? x - y :
          String(x).localeCompare(String(y), undefined, { numeric: true });
        return down ? -c : c;
      }).forEach(function (row) { if (body) { body.appendChild(row); } });
    });
  });

  // -- one run at a time: #e3 (or a step in it) shows that run, anything else the index -----
  var index = document.getElementById("index");
  var runs = all("main > .run");
  function route() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    var run = target && target.closest ? target.closest(".run") : null;
    runs.forEach(function (r) { r.classList.toggle("on", r === run); });
    index.classList.toggle("off", !!run);
    if (run && target !== run) {
      for (var d = target; d && d !== run; d = d.parentElement) {
        if (d.tagName === "DETAILS") { d.open = true; }
      }
      target.scrollIntoView();
    } else {
      window.scrollTo(0, 0);
    }
  }
  window.addEventListener("hashchange", route);
  route();
}());
