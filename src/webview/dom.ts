/**
 * Building the panel's DOM: HTML and SVG elements with attributes and children, text always as
 * text nodes (nothing the extension posts is ever parsed as HTML). No style attributes: the panel's
 * CSP forbids them, so looks come from classes and sizes from SVG attributes.
 */

/** An attribute value; `false`, null and undefined leave the attribute out, `true` sets it empty. */
export type AttrValue = string | number | boolean | null | undefined;
export type Child = Node | string | number | null | undefined | false | Child[];

function fill(e: Element, attrs: Record<string, AttrValue>, children: Child[]): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    e.setAttribute(k === 'className' ? 'class' : k, v === true ? '' : String(v));
  }
  append(e, children);
}

function append(e: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(e, c);
    else e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** An HTML element. */
export function h(tag: string, attrs: Record<string, AttrValue> = {}, ...children: Child[]): HTMLElement {
  const e = document.createElement(tag);
  fill(e, attrs, children);
  return e;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element. */
export function svg(tag: string, attrs: Record<string, AttrValue> = {}, ...children: Child[]): SVGElement {
  const e = document.createElementNS(SVG_NS, tag);
  fill(e, attrs, children);
  return e;
}

/** A section with its heading (`id` keys it across updates). */
export function section(id: string, title: string, ...children: Child[]): HTMLElement {
  return h('section', { id, 'aria-labelledby': `${id}-title` }, h('h2', { id: `${id}-title` }, title), ...children);
}

/** A table with a header row and body rows of text cells. */
export function table(head: string[], rows: Array<Array<string | Node>>): HTMLElement {
  return h(
    'table',
    {},
    head.length ? h('thead', {}, h('tr', {}, ...head.map((c) => h('th', { scope: 'col' }, c)))) : null,
    h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((c) => h('td', {}, c))))),
  );
}

/** A button that asks the page's click handler to do `action` (with data attributes for its arguments). */
export function button(label: string, action: string, data: Record<string, string> = {}, extra: Record<string, AttrValue> = {}): HTMLElement {
  const attrs: Record<string, AttrValue> = { type: 'button', 'data-action': action, ...extra };
  for (const [k, v] of Object.entries(data)) attrs[`data-${k}`] = v;
  return h('button', attrs, label);
}
