/// The frame every page shares: a title, the navigation, the content;
/// no inline script or style (the Content-Security-Policy forbids both).
enum Page {
  /// A whole HTML document around `content` (already escaped).
  static func document(title: String, content: String) -> String {
    """
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>\(HTML.escape(title)) · Lunar</title>
    <link rel="stylesheet" href="/style.css">
    <link rel="icon" href="/favicon.svg" type="image/svg+xml">
    <script src="/live.js" defer></script>
    </head>
    <body>
    <header><nav aria-label="Lunar"><a href="/" class="brand">Lunar</a> <a href="/">Runs</a> <a href="/queues">Queues</a> <a href="/schedules">Schedules</a></nav></header>
    <main>
    \(content)
    </main>
    </body>
    </html>

    """
  }

  /// A form that POSTs one action to `path` with the session's token and
  /// `fields`, its button labelled `label` (and read out as `spoken`,
  /// where a row's buttons need their row's name); `id` names the button.
  static func actionForm(
    _ path: String, session: SessionToken, fields: [(String, String)] = [], label: String, spoken: String? = nil, id: String? = nil
  ) -> String {
    let hidden = fields.map { "<input type=\"hidden\" name=\"\($0.0)\" value=\"\(HTML.escape($0.1))\">" }.joined()
    var button = id.map { " id=\"\(HTML.escape($0))\"" } ?? ""
    if let spoken { button += " aria-label=\"\(HTML.escape(spoken))\"" }
    return """
      <form class="actions" method="post" action="\(HTML.escape(path))">\
      <input type="hidden" name="csrf" value="\(session.value)">\(hidden)\
      <button type="submit"\(button)>\(HTML.escape(label))</button></form>
      """
  }

  /// Keeps a page current without reloading it: asks `/changes` ten times
  /// a second whether the store changed, and then (or every five seconds,
  /// for the times a page shows) fetches the page and puts the new `<main>`
  /// in place when it differs (not while the user is in one of its forms).
  /// A page reads the same without it.
  static let liveScript = """
    "use strict";
    (function () {
      let main = document.querySelector("main");
      if (!main) return;
      // Once a form of the page is pressed, typed into or sent, the page
      // is the user's: it is not replaced under their click or their text.
      let paused = false;
      const pause = (event) => { if (event.target.closest && event.target.closest("main form")) paused = true; };
      document.addEventListener("pointerdown", pause, true);
      document.addEventListener("input", pause, true);
      document.addEventListener("submit", pause, true);
      // Nor while the keyboard is in one of its forms; asked when the new
      // page has come, since focus may have moved while it was fetched.
      const inForm = () => document.activeElement && document.activeElement.closest && document.activeElement.closest("main form");
      async function refresh() {
        if (paused) return;
        try {
          const response = await fetch(location.href, { cache: "no-store", credentials: "same-origin" });
          const text = response.ok ? await response.text() : null;
          if (text !== null && !inForm() && !paused) {
            const page = new DOMParser().parseFromString(text, "text/html");
            const next = page.querySelector("main");
            if (next && next.innerHTML !== main.innerHTML) {
              main.replaceWith(next);
              main = next;
              document.title = page.title;
            }
          }
        } catch (error) {
          // The server is gone for now: the next turn tries again.
        }
      }
      let mark = null;
      let fetched = Date.now();
      async function watch() {
        if (paused) return;
        try {
          const response = await fetch("/changes", { cache: "no-store", credentials: "same-origin" });
          const now = response.ok ? await response.text() : null;
          const changed = now !== null && mark !== null && now !== mark;
          if (now !== null) mark = now;
          if (changed || Date.now() - fetched > 5000) {
            fetched = Date.now();
            await refresh();
          }
        } catch (error) {
          // As above: the next turn tries again.
        }
        setTimeout(watch, 100);
      }
      watch();
    })();

    """

  /// The icon: a crescent moon.
  static let icon = """
    <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path fill="#0969da" \
    d="M21 3a13 13 0 1 0 8 20A11 11 0 0 1 21 3z"/></svg>

    """

  /// The stylesheet: light and dark, from the system's preference.
  static let style = """
    :root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #59636e; --line: #d1d9e0;
      --ok: #1a7f37; --bad: #cf222e; --run: #0969da; --wait: #9a6700; }
    @media (prefers-color-scheme: dark) {
      :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d;
        --ok: #3fb950; --bad: #f85149; --run: #4493f8; --wait: #d29922; } }
    body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 0; }
    header { border-bottom: 1px solid var(--line); padding: 0.6rem 1.2rem; }
    header a { color: var(--fg); margin-right: 1rem; text-decoration: none; }
    header a.brand { font-weight: 700; }
    main { padding: 1rem 1.2rem; max-width: 80rem; }
    table { border-collapse: collapse; width: 100%; }
    th, td { text-align: left; padding: 0.35rem 0.6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
    th { color: var(--muted); font-weight: 600; }
    tbody th { color: var(--fg); }
    tr.child th { padding-left: 1.8rem; font-weight: 400; }
    a { color: var(--run); }
    a:focus, button:focus, select:focus, input:focus { outline: 2px solid var(--run); outline-offset: 2px; }
    .status { font-weight: 600; }
    .succeeded, .reused { color: var(--ok); }
    .failed, .cancelled, .interrupted { color: var(--bad); }
    .running, .queued { color: var(--run); }
    .parked, .skipped { color: var(--wait); }
    .muted { color: var(--muted); }
    pre { white-space: pre-wrap; word-break: break-word; margin: 0; font-size: 13px; }
    form.filters { margin-bottom: 1rem; display: flex; gap: 0.8rem; align-items: end; flex-wrap: wrap; }
    label { display: flex; flex-direction: column; font-size: 13px; color: var(--muted); }
    dl { display: grid; grid-template-columns: max-content auto; gap: 0.2rem 1rem; }
    dt { color: var(--muted); }
    dd { margin: 0; }
    form.actions { margin: 1rem 0; }
    td form.actions { display: inline-block; margin: 0 0.4rem 0 0; }
    form.signal, form.rerun { margin: 1rem 0; display: flex; gap: 0.8rem; align-items: end; flex-wrap: wrap; }
    input, select { font: inherit; padding: 0.2rem 0.4rem; border: 1px solid var(--line); border-radius: 6px;
      background: var(--bg); color: var(--fg); }
    nav.pages { margin-top: 1rem; }
    svg.timeline { width: 100%; max-width: 80rem; height: auto; margin: 0.5rem 0 1rem; }
    svg.timeline text { fill: var(--fg); font: 12px system-ui, sans-serif; }
    svg.timeline line { stroke: var(--line); }
    svg.timeline text.label { fill: #ffffff; font-size: 11px; pointer-events: none; }
    svg.timeline rect { fill: var(--muted); }
    svg.timeline rect.succeeded, svg.timeline rect.reused { fill: var(--ok); }
    svg.timeline rect.failed { fill: var(--bad); }
    svg.timeline rect.running { fill: var(--run); }
    svg.timeline rect.skipped { fill: var(--wait); }
    .run-graph { margin: 0.5rem 0 1rem; overflow-x: auto; }
    .run-graph svg { max-width: 100%; height: auto; }
    .run-graph g.graph > polygon { fill: transparent; }
    .run-graph text { fill: var(--fg); }
    .run-graph a { color: var(--fg); }
    .run-graph .edge path { stroke: var(--muted); }
    .run-graph .edge polygon { stroke: var(--muted); fill: var(--muted); }
    .run-graph .node polygon { stroke: currentColor; stroke-width: 2; fill: var(--bg); }
    .run-graph .succeeded a, .run-graph .reused a { color: var(--ok); }
    .run-graph .failed a, .run-graph .cancelled a { color: var(--bad); }
    .run-graph .running a { color: var(--run); }
    .run-graph .skipped a { color: var(--wait); }
    .run-graph .pending a { color: var(--muted); }
    .run-graph .node.pending polygon { stroke-dasharray: 4 3; }
    .run-graph a:focus polygon { stroke-width: 4; }
    pre.log { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem; margin: 0.3rem 0 1rem; }
    pre.log .stderr { color: var(--bad); }
    button { font: inherit; padding: 0.3rem 0.9rem; border: 1px solid var(--line); border-radius: 6px;
      background: var(--bg); color: var(--fg); cursor: pointer; }
    button#cancel { border-color: var(--bad); color: var(--bad); }

    """
}
