/*
 * dom.js - small DOM helpers, and one figure (label, the answer's text,
 * its formula on hover and in a <details>).
 */
import { DASH, assumptionsOf, formulaOf, labelOf, textOf } from './format.js';

export const $ = (sel) => document.querySelector(sel);


export function h(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === undefined || v === null || v === false) continue;
        if (k === 'text') node.textContent = v;
        else node.setAttribute(k, v === true ? '' : String(v));
    }
    for (const kid of kids) {
        if (kid === undefined || kid === null) continue;
        node.appendChild(typeof kid === 'string' ? document.createTextNode(kid) : kid);
    }
    return node;
}

export function clearNode(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
}

/* One figure: label, value, and its formula both on hover (title) and in
 * a <details> that keyboard and touch users can open. */
export function figure(id, label, text, formula, assumptions, extraClass) {
    const how = formula || assumptions;
    const tip = [formula, assumptions].filter(Boolean).join(' — ');
    const dd = h('dd', {},
        h('span', { class: 'v' + (extraClass ? ' ' + extraClass : ''), id, title: tip || null, text: text || DASH }));
    if (text === DASH || !text) dd.appendChild(h('span', { class: 'why muted', text: ' not in the answer' }));
    if (how) {
        dd.appendChild(h('details', { class: 'how' },
            h('summary', { text: 'how' }),
            formula ? h('code', { text: formula }) : null,
            assumptions ? h('p', { text: assumptions }) : null));
    }
    return [h('dt', { text: label }), dd];
}

/* Member key of obj (an object at path of the answer): the terms table's
 * label, the answer's text, the formula (the answer's for a term, the
 * table's for a number) and what it assumes.  opts: label, text (a
 * composite of the answer's texts), cls. */
export function fig(id, obj, path, key, opts = {}) {
    return figure(id, opts.label || labelOf(path, key), opts.text || textOf(obj, path, key),
        formulaOf(obj, path, key), assumptionsOf(obj, path, key), opts.cls);
}

export function fill(dl, rows) {
    clearNode(dl);
    for (const r of rows) for (const n of r) dl.appendChild(n);
}

