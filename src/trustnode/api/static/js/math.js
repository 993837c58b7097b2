// Typeset math in trace text with KaTeX (served by this node). The text was HTML-escaped by
// the server, so it arrives as text nodes: auto-render only turns $...$ / \(...\) spans into
// KaTeX markup; `trust: false` keeps \href, \url and \htmlClass from producing links or
// attributes, and size/expansion limits keep hostile input from freezing the page.
"use strict";
(function () {
  function typeset() {
    if (typeof window.renderMathInElement !== "function") {
      return;
    }
    var blocks = document.querySelectorAll(".trace-text");
    for (var i = 0; i < blocks.length; i++) {
      window.renderMathInElement(blocks[i], {
        delimiters: [
          { left: "$$", right: "$$", display: true },
          { left: "\\[", right: "\\]", display: true },
          { left: "\\(", right: "\\)", display: false },
          { left: "$", right: "$", display: false }
        ],
        throwOnError: false,
        trust: false,
        strict: "ignore",
        maxSize: 20,
        maxExpand: 200
      });
    }
    document.body.setAttribute("data-math", "rendered");
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", typeset);
  } else {
    typeset();
  }
})();
