// The report's layout as the browser computed it (tests/report_browser_test.sh
// appends this script to a copy of each report, docs/report.md "Two networks":
// its browser test). It writes what it finds into <body data-layout="...">: "ok", or the
// defects, " || " between them. Defects:
//  - overlap: two texts of one chart whose boxes intersect;
//  - clipped: a chart's text outside the chart's box, a table cell's text
//    outside its cell, or a box that is wider than its parent allows without
//    scrolling (scrollWidth > clientWidth where overflow is not auto/scroll);
//  - wrapped: a table cell's text on more than one line;
//  - too small: a chart scaled down until its text is under 7 px.
(() => {
  const slack = 0.5;  // px: rounding of the layout
  const defects = [];
  const short = s => (s || '').replace(/\s+/g, ' ').trim().slice(0, 40);
  const where = el => {
    const owner = el.closest('[id]');
    return owner ? '#' + owner.id : el.tagName.toLowerCase();
  };
  const inside = (r, box) =>
    r.left >= box.left - slack && r.right <= box.right + slack && r.top >= box.top - slack && r.bottom <= box.bottom + slack;
  const overlap = (p, q) =>
    Math.min(p.right, q.right) - Math.max(p.left, q.left) > 1 && Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top) > 1;

  for (const svg of document.querySelectorAll('svg')) {
    const box = svg.getBoundingClientRect();
    const view = svg.viewBox.baseVal;
    const scale = view && view.width > 0 ? box.width / view.width : 1;
    const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim() !== '');
    const rects = texts.map(t => t.getBoundingClientRect());
    texts.forEach((t, i) => {
      if (!inside(rects[i], box)) defects.push(`clipped: ${where(svg)}: "${short(t.textContent)}" lies outside the chart`);
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (px < 7) defects.push(`too small: ${where(svg)}: "${short(t.textContent)}" drawn at ${px.toFixed(1)} px`);
      for (let j = 0; j < i; ++j)
        if (overlap(rects[i], rects[j]))
          defects.push(`overlap: ${where(svg)}: "${short(t.textContent)}" over "${short(texts[j].textContent)}"`);
    });
  }

  // A cell's text as the lines it is laid out on: each text node's boxes, a
  // box starting below the bottom of the line before it starting a new line.
  for (const cell of document.querySelectorAll('td, th')) {
    const boxes = [];
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      if (node.textContent.trim() === '') continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      boxes.push(...[...range.getClientRects()].filter(r => r.width > 0));
    }
    if (!boxes.length) continue;
    const box = cell.getBoundingClientRect();
    if (boxes.some(r => !inside(r, box))) defects.push(`clipped: ${where(cell)}: "${short(cell.textContent)}" spills out of its cell`);
    boxes.sort((p, q) => p.top - q.top);
    let lines = 1, bottom = boxes[0].bottom;
    for (const r of boxes.slice(1)) {
      if (r.top >= bottom - 1) ++lines;
      bottom = Math.max(bottom, r.bottom);
    }
    // Headers may wrap; a figure or a name split over two lines is misread.
    if (cell.tagName === 'TD' && lines > 1) defects.push(`wrapped: ${where(cell)}: "${short(cell.textContent)}"`);
  }

  const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  for (const el of [document.documentElement, ...document.body.querySelectorAll('*')]) {
    if (el.closest('svg') || el.clientWidth === 0 || scrolls(el)) continue;
    if (el.scrollWidth > el.clientWidth + 1)
      defects.push(`clipped: ${where(el)}: <${el.tagName.toLowerCase()}> is ${el.scrollWidth} px wide in ${el.clientWidth} px`);
  }

  document.body.dataset.layout = defects.length ? [...new Set(defects)].join(' || ') : 'ok';
})();
