// The document's text recognition (OCR, issue 46), from what the API
// gives: the OCR action's state (GET /documents/{id}/actions), the
// recognized text (GET /documents/{id}/ocr, pages separated by form
// feeds), the pages turned or straightened (metadata.pagesFixed), and the
// searchable PDF the action names (metadata.artifactId) once it is among
// GET /documents/{id}/artifacts. A failed OCR says why in plain words
// (the engine's own text stays behind "Details") and runs again through
// POST /documents/{id}/actions/retry {"actionTypes":["OCR"]} (that OCR
// only); a finished one is recognized again with a new OCR action, and
// a document without one gets OCR then FULLTEXT (POST .../actions; the
// server reads in the site's languages, processing.languages).
// While the OCR runs, the FULLTEXT after it puts its words into search or
// its PDF is being made the panel asks again every two seconds, until it is off the page (bounded: about 20 minutes).
import { h, clear } from "./dom.js";
import { api } from "./api.js";
import { siteQuery, status, errorText } from "./ctx.js";
import { t, num, lang } from "../i18n/index.js";

const enc = encodeURIComponent;
const busy = new Set(["PENDING", "RUNNING", "WAITING_FOR_RETRY", "IN_QUEUE"]);
const POLL_MS = 2000, MAX_POLLS = 600;
// PDF_LATE: a searchable PDF not there this long after the OCR finished
// is not coming (it could not be made, or was deleted); the API does not
// say which (HOOKS-46.md).
const PDF_LATE_MS = 10 * 60 * 1000;

// since is how long ago an API date was (ms), 0 when it has none.
function since(s) {
  if (!s) return 0;
  const d = Date.parse(String(s).replace(/([+-]\d\d)(\d\d)$/, "$1:$2"));
  return isNaN(d) ? 0 : Date.now() - d;
}

// reads tells whether OCR reads a content type (the pipeline's images
// and PDFs).
function reads(ct) {
  return /^application\/pdf$|^image\/(png|jpeg|tiff|bmp|gif|webp|x-portable-pixmap)$/.test(String(ct || "").split(";")[0].trim().toLowerCase());
}

// lastOCR is the newest OCR action: a retry's copy and a new action both
// come after the one they follow.
export function lastOCR(actions) {
  let last = null;
  for (const a of actions || []) if (a.type === "OCR") last = a;
  return last;
}

// indexAfter is the FULLTEXT action after the newest OCR (it puts the
// recognized words into search), or null.
function indexAfter(actions) {
  let seen = false, out = null;
  for (const a of actions || []) {
    if (a.type === "OCR") { seen = true; out = null; } else if (seen && a.type === "FULLTEXT") out = a;
  }
  return out;
}

// list joins words as the language does ("1, 2 and 3").
function list(items) {
  try { return new Intl.ListFormat(lang(), { type: "conjunction" }).format(items); } catch (_) { return items.join(", "); }
}

// languageName is a tesseract code ("deu") as the language's name.
function languageName(code) {
  try {
    const n = new Intl.DisplayNames([lang()], { type: "language" }).of(code);
    if (n) return n;
  } catch (_) { /* not a BCP 47 code (chi_sim): shown as it is */ }
  return code;
}

// failReason is the plain sentence for an OCR failure's engine message
// (pipeline/ocr.go's wording).
export function failReason(message) {
  const m = String(message || "");
  let x;
  if ((x = /no language data for '([^']+)'/.exec(m))) return t("ocr.fail.language", { language: languageName(x[1]) });
  if (/encrypted/i.test(m)) return t("ocr.fail.encrypted");
  if ((x = /has (\d+) pages; OCR renders at most (\d+)/.exec(m))) return t("ocr.fail.tooManyPages", { n: Number(x[1]), max: Number(x[2]) });
  if (/megapixels|too large to render/i.test(m)) return t("ocr.fail.tooLarge");
  if (/temp dir|free space|no space/i.test(m)) return t("ocr.fail.noRoom");
  if (/not found(:| at).*Debian package|executable file not found/i.test(m)) return t("ocr.fail.noProgram");
  if (/cannot be read|bad PNM|short PNM/i.test(m)) return t("ocr.fail.unreadable");
  if (/ocrEngine|ocrNumberOfPages/.test(m)) return t("ocr.fail.settings");
  if (/deadline|timed? ?out|killed/i.test(m)) return t("ocr.fail.timeout");
  return t("ocr.fail.other");
}

// fixedWords turns metadata.pagesFixed ("2: turned 180; 3: straightened
// 4.0") into one sentence per page.
export function fixedWords(pagesFixed) {
  const out = [];
  for (const part of String(pagesFixed || "").split(";")) {
    const m = /^\s*(\d+)\s*:\s*(.+)$/.exec(part);
    if (!m) continue;
    const what = [];
    for (const step of m[2].split(",")) {
      let x;
      if ((x = /turned\s+(-?\d+)/.exec(step))) what.push(t("ocr.turned", { deg: num(Number(x[1])) }));
      else if ((x = /straightened\s+(-?[\d.]+)/.exec(step))) what.push(t("ocr.straightened", { deg: num(Math.abs(Number(x[1])), { maximumFractionDigits: 1 }) }));
    }
    if (what.length) out.push(t("ocr.pageFixed", { page: num(Number(m[1])), what: list(what) }));
  }
  return out;
}

// pagesOf splits the OCR text into its pages (form feeds; the last
// page's own feed ends the text).
export function pagesOf(text) {
  const pages = String(text || "").split("\f");
  if (pages.length > 1 && pages[pages.length - 1].trim() === "") pages.pop();
  return pages;
}

// ocrSection is the panel, drawn from the page's own answers (actions,
// artifacts) and kept up to date while the OCR or its PDF is under way.
// It is null for a document OCR cannot read and has never been asked to.
// onChange(actions, artifacts), when given, gets each new answer of its
// polls (the page's Actions table follows them).
export function ocrSection({ id, doc, actions, artifacts, write, reload, stale, onChange }) {
  // What OCR does not read (OCR by default skips it) gets no panel.
  const first = lastOCR(actions);
  if (!reads(doc.contentType) && (!first || first.status === "SKIPPED")) return null;
  const q = siteQuery();
  const line = h("p#ocr-state", { role: "status" });
  const body = h("div.ocr-body");
  const section = h("section#ocr.ocr", { "aria-labelledby": "ocr-title" }, h("h2#ocr-title", t("ocr.title")), line, body);
  let shown = "", polls = 0, attached = false, textOpen = false, lastActs = null, lastArts = null;

  const run = (fn, done) => async () => {
    try { await fn(); status(done, "info"); reload(); } catch (ex) { status(errorText(ex), "error"); }
  };
  const recognize = (a) => api("POST", `/documents/${enc(id)}/actions`, { query: q,
    body: { actions: [a && a.parameters ? { type: "OCR", parameters: a.parameters } : { type: "OCR" }, { type: "FULLTEXT" }] } });
  const downloadPDF = (artifactId) => async () => {
    try {
      const { url } = await api("GET", `/documents/${enc(id)}/url`, { query: { ...q, artifactId } });
      const link = h("a", { href: url, download: "" });
      document.body.append(link); link.click(); link.remove();
    } catch (ex) { status(errorText(ex), "error"); }
  };

  const textBlock = async () => {
    let out;
    try { out = await api("GET", `/documents/${enc(id)}/ocr`, { query: q }); } catch (ex) {
      return h("p.msg.error#ocr-text-error", errorText(ex));
    }
    const pages = pagesOf(out.data);
    if (!pages.some((p) => p.trim())) return h("p#ocr-no-text", t("ocr.noText"));
    const d = h("details#ocr-text", { open: textOpen, ontoggle: () => { textOpen = d.open; } },
      h("summary", t("ocr.text"), " ", h("span.meta", t("ocr.textPages", { n: pages.length }))),
      h("div.ocr-pages#ocr-pages", { tabindex: "0", role: "region", "aria-label": t("ocr.text") },
        pages.map((p, i) => h("div.ocr-page", { dataset: { page: String(i + 1) } },
          h("h3", t("ocr.page", { page: num(i + 1) })),
          p.trim() ? h("pre", p.replace(/\s+$/, "")) : h("p.meta", t("ocr.emptyPage"))))));
    return d;
  };

  // draw shows the state; it draws again only when the state changed (an
  // open text block stays open while the panel polls).
  const draw = async (acts, arts) => {
    const a = lastOCR(acts);
    const md = (a && a.metadata) || {};
    // artifactStatus DELETED: the PDF was made and deleted since; nothing to offer.
    const pdfId = a && a.status === "COMPLETE" && md.artifactStatus !== "DELETED" ? md.artifactId : "";
    const pdf = pdfId ? (arts || []).find((x) => x.artifactId === pdfId) : null;
    // artifactStatus FAILED: given up (artifactMessage says why); a
    // server without artifactStatus: late after PDF_LATE_MS.
    const late = !!pdfId && !pdf && (md.artifactStatus === "FAILED" || since(a.completedDate) > PDF_LATE_MS);
    const ft = indexAfter(acts);
    const key = JSON.stringify([a && a.status, a && a.message, md, !!pdf, late, ft && ft.status]);
    if (key === shown) return false;
    shown = key;
    const st = a ? a.status : "NONE";
    section.dataset.state = st;
    const parts = [];
    const again = write ? h("button#ocr-again", { type: "button" }, t("ocr.again")) : null;
    if (!a) {
      line.textContent = t("ocr.none");
      if (write) parts.push(h("button.primary#ocr-run", { type: "button", onclick: run(() => recognize(null), t("ocr.started")) }, t("ocr.run")));
    } else if (busy.has(st)) {
      line.textContent = t(st === "RUNNING" ? "ocr.running" : st === "WAITING_FOR_RETRY" ? "ocr.waitingRetry" : "ocr.pending");
    } else if (st === "FAILED" || st === "MAX_RETRIES_REACHED") {
      line.textContent = t("ocr.failed");
      parts.push(h("p.msg.error#ocr-reason", failReason(a.message)));
      if (a.message) parts.push(h("details.ocr-details", h("summary", t("doc.details")), h("span.meta", a.message)));
      // Only the OCR: another failed action of the document (a webhook)
      // is not run again from here (API.md "Retrying one kind of action").
      if (again) { again.onclick = run(() => api("POST", `/documents/${enc(id)}/actions/retry`, { query: q, body: { actionTypes: ["OCR"] } }), t("ocr.started")); parts.push(again); }
    } else if (st === "SKIPPED") {
      line.textContent = t("ocr.skipped");
      if (again && reads(doc.contentType)) { again.onclick = run(() => recognize(a), t("ocr.started")); parts.push(again); }
    } else if (st === "COMPLETE") {
      const n = Number(md.pages) || 0;
      line.textContent = n ? t("ocr.done", { n }) : t("ocr.doneNoCount");
      const facts = [];
      if (md.textLayer === "true") facts.push(t("ocr.textLayer"));
      if (md.languages) facts.push(t("ocr.languages", { languages: list(String(md.languages).split("+").map(languageName)) }));
      facts.push(...fixedWords(md.pagesFixed));
      if (md.pagesTimedOut) {
        const slow = String(md.pagesTimedOut).split(",").filter(Boolean);
        facts.push(t("ocr.timedOut", { n: slow.length, pages: list(slow.map((p) => num(Number(p)))) }));
      }
      if (ft && busy.has(ft.status)) facts.push(t("ocr.indexing"));
      else if (ft && ft.status === "COMPLETE") facts.push(t("ocr.indexed"));
      if (facts.length) parts.push(h("ul.ocr-facts#ocr-facts", facts.map((f) => h("li", f))));
      if (pdfId) {
        parts.push(pdf ? h("p#ocr-pdf", h("button.link#ocr-pdf-download", { type: "button", onclick: downloadPDF(pdfId) }, t("ocr.pdfDownload")))
          : h("p.meta#ocr-pdf", t(late ? "ocr.pdfMissing" : "ocr.pdfMaking"),
            late && md.artifactMessage ? h("span.ocr-pdf-why", " (" + md.artifactMessage + ")") : null));
      }
      parts.push(await textBlock());
      if (again) { again.onclick = run(() => recognize(a), t("ocr.started")); parts.push(again); }
    } else {
      line.textContent = t("ocr.other", { state: st.replace(/[_-]+/g, " ").toLowerCase() });
    }
    clear(body, parts);
    return true;
  };

  const waiting = () => {
    const a = lastOCR(actions);
    if (!a) return false;
    if (busy.has(a.status)) return true;
    const ft = indexAfter(actions);
    if (a.status === "COMPLETE" && ft && busy.has(ft.status)) return true;
    const md = a.metadata || {};
    return a.status === "COMPLETE" && !!md.artifactId && !(artifacts || []).some((x) => x.artifactId === md.artifactId) &&
      md.artifactStatus !== "FAILED" && md.artifactStatus !== "DELETED" && since(a.completedDate) <= PDF_LATE_MS;
  };
  const poll = async () => {
    if (section.isConnected) attached = true;
    else if (attached || polls > 10) return; // off the page
    if (stale && stale()) return;
    if (polls++ >= MAX_POLLS) return;
    if (attached) {
      try {
        const [acts, arts] = await Promise.all([
          // If-None-Match: a turn that finds nothing new is two 304s.
          api("GET", `/documents/${enc(id)}/actions`, { query: q, revalidate: true }),
          api("GET", `/documents/${enc(id)}/artifacts`, { query: { ...q, limit: 50 }, revalidate: true }),
        ]);
        if (stale && stale()) return;
        // A 304 gives the answer kept from the previous turn: the same
        // object, so nothing new to draw.
        const changed = acts !== lastActs || arts !== lastArts;
        lastActs = acts; lastArts = arts;
        actions = acts.actions || [];
        artifacts = arts.documents || [];
        await draw(actions, artifacts);
        if (changed && onChange) onChange(actions, artifacts);
      } catch (_) { /* asked again at the next turn */ }
    }
    if (waiting()) setTimeout(poll, POLL_MS);
  };

  draw(actions, artifacts).then(() => { if (waiting()) setTimeout(poll, POLL_MS); });
  return section;
}
