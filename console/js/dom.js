// Tiny DOM helpers: every element is built with createElement and text
// nodes, never by parsing markup, so nothing from the API can become HTML.
import { t, num } from "../i18n/index.js";

// h("button.primary#save", {onclick, type: "button", "aria-label": ...}, ...children)
export function h(tag, attrs, ...children) {
  const m = /^([a-z0-9]+)((?:[.#][\w-]+)*)$/i.exec(tag);
  const el = document.createElement(m ? m[1] : tag);
  if (m && m[2]) {
    for (const part of m[2].match(/[.#][\w-]+/g)) {
      if (part[0] === ".") el.classList.add(part.slice(1));
      else el.id = part.slice(1);
    }
  }
  if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k in el && typeof v !== "string") el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// clear empties el and appends children.
export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// fmtBytes writes a size in the console's language: 1234567 ->
// "1.2 MB", "1,2 MB", "1,2 Mo" (decimal units, one decimal from KB up).
export function fmtBytes(n) {
  if (n === undefined || n === null || n === "" || isNaN(Number(n))) return "";
  n = Number(n);
  const u = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < u.length - 1) { n /= 1000; i++; }
  return t("unit." + u[i], { size: num(n, { maximumFractionDigits: i ? 1 : 0, minimumFractionDigits: i ? 1 : 0 }) });
}

// fmtDate formats an API date ("2026-11-27T05:19:18+0000") in the
// console's language.
export function fmtDate(s, lang) {
  if (!s) return "";
  const d = new Date(s.replace(/([+-]\d\d)(\d\d)$/, "$1:$2"));
  return isNaN(d) ? s : d.toLocaleString(lang);
}

// highlight turns an API snippet, HTML-escaped text with <mark> around
// matches, into nodes without ever parsing it as HTML.
export function highlight(snippet) {
  const out = [];
  const parts = String(snippet).split(/(<mark>|<\/mark>)/);
  let marked = false;
  for (const p of parts) {
    if (p === "<mark>") { marked = true; continue; }
    if (p === "</mark>") { marked = false; continue; }
    const text = p.replace(/&(lt|gt|amp|quot|#34|#39);/g, (_, e) =>
      ({ lt: "<", gt: ">", amp: "&", quot: '"', "#34": '"', "#39": "'" })[e]);
    if (text) out.push(marked ? h("mark", text) : document.createTextNode(text));
  }
  return out;
}
