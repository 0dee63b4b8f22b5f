// Injected at the end of a page by scripts/screenshots.sh and run by headless Chromium
// (--dump-dom): every text cell or label whose content overflows its box (scrollWidth >
// clientWidth), every SVG <text> whose box is not inside its <svg>, every data point (class
// "pt") whose centre is outside its chart's plot area (class "plot") and a page wider than the
// window is a problem. The result is one line in a <pre id="kg-check">: KGCHECK {"problems":
// [...], "points": N (points checked), "width": W, "height": H}.
(function () {
  var problems = [];
  var cells = 'td,th,h1,h2,h3,h4,p,li,caption,dt,dd,summary,label,pre,figcaption';
  function short(s) { s = (s || '').replace(/\s+/g, ' ').trim(); return s.length > 70 ? s.slice(0, 67) + '...' : s; }
  document.querySelectorAll(cells).forEach(function (el) {
    var cs = getComputedStyle(el);
    if (cs.display === 'none' || cs.display === 'inline') return;
    if (cs.overflowX === 'auto' || cs.overflowX === 'scroll') return; // scrolls on purpose
    if (el.scrollWidth > el.clientWidth + 1)
      problems.push('text overflows its <' + el.tagName.toLowerCase() + '> (' + el.scrollWidth +
                    ' > ' + el.clientWidth + ' px): "' + short(el.textContent) + '"');
  });
  document.querySelectorAll('svg').forEach(function (svg) {
    var r = svg.getBoundingClientRect();
    svg.querySelectorAll('text').forEach(function (t) {
      var b = t.getBoundingClientRect();
      if (b.width === 0 && b.height === 0) return;
      if (b.left < r.left - 0.5 || b.top < r.top - 0.5 || b.right > r.right + 0.5 ||
          b.bottom > r.bottom + 0.5)
        problems.push('SVG text outside its <svg> ([' + [b.left, b.top, b.right, b.bottom].map(Math.round) +
                      '] not in [' + [r.left, r.top, r.right, r.bottom].map(Math.round) + ']): "' +
                      short(t.textContent) + '"');
    });
  });
  var points = 0;
  document.querySelectorAll('svg').forEach(function (svg) {
    var plots = [].slice.call(svg.querySelectorAll('.plot')).map(function (p) {
      return p.getBoundingClientRect();
    });
    if (!plots.length) return;
    svg.querySelectorAll('.pt').forEach(function (pt) {
      var b = pt.getBoundingClientRect(), x = (b.left + b.right) / 2, y = (b.top + b.bottom) / 2;
      points++;
      if (!plots.some(function (r) {
            return x >= r.left - 0.5 && x <= r.right + 0.5 && y >= r.top - 0.5 && y <= r.bottom + 0.5;
          }))
        problems.push('a point outside the plot area of its chart (centre [' + [x, y].map(Math.round) +
                      ']): "' + short(pt.textContent) + '"');
    });
  });
  var page = document.documentElement.scrollWidth, win = window.innerWidth;
  if (page > win + 1)
    problems.push('the page is ' + page + ' px wide in a ' + win + ' px window: what passes the ' +
                  'right edge is cut off');
  var out = document.createElement('pre');
  out.id = 'kg-check';
  out.textContent = 'KGCHECK ' + JSON.stringify({
    problems: problems,
    points: points,
    width: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight
  });
  document.body.appendChild(out);
})();
