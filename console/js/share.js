// A short link to share a document (POST /shortlinks, API.md "Short
// links"): /s/<slug> answers a download URL signed at each click, so the
// link keeps working while the document does. The slug is random (12
// characters of A-Z a-z 0-9), made here; a taken one is tried again once.
import { h, clear } from "./dom.js";
import { api } from "./api.js";
import { siteQuery, status, errorText } from "./ctx.js";
import { t } from "../i18n/index.js";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function slug() {
  const b = new Uint8Array(12);
  crypto.getRandomValues(b);
  return [...b].map((x) => ALPHABET[x % ALPHABET.length]).join("");
}

export function shareSection(id) {
  const out = h("div#share-result");
  const make = h("button#share", { type: "button", onclick: async () => {
    let res = null;
    for (let i = 0; i < 2 && !res; i++) {
      try {
        res = await api("POST", "/shortlinks", { query: siteQuery(), body: { targetUrl: "/documents/" + id, slug: slug() } });
      } catch (e) {
        if (e.status !== 409 || i === 1) { status(errorText(e), "error"); return; }
      }
    }
    const field = h("input#share-url", { type: "text", readonly: true, value: res.url, "aria-label": t("share.link") });
    const copied = h("span#share-copied", { role: "status" });
    const copy = h("button#share-copy", { type: "button", onclick: async () => {
      field.select();
      try { await navigator.clipboard.writeText(res.url); copied.textContent = t("share.copied"); }
      catch (_) { copied.textContent = t("share.selectToCopy"); }
    } }, t("share.copy"));
    clear(out, h("div.inline", field, copy, copied));
    field.focus();
    field.select();
  } }, t("share.make"));
  return h("section#sharing", h("h2", t("share.title")), h("p.meta", t("share.help")), make, out);
}
