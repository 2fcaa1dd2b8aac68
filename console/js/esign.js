// Sending a PDF for e-signature with Quire's local provider and following
// its envelopes (API.md "E-signature"): the signers get a link by mail;
// the list shows each envelope's and signer's status, a voiding, and the
// signed copy once completed (an artifact of the document).
import { h, clear, fmtDate } from "./dom.js";
import { api } from "./api.js";
import { siteQuery, status, errorText } from "./ctx.js";
import { named } from "./words.js";
import { t, lang } from "../i18n/index.js";

const enc = encodeURIComponent;

// linkSlot is a button that asks for a signer's link (views/recipient,
// which the API gives the envelope's sender for a signer whose mail
// failed) and shows it to copy.
function linkSlot(base, q, envelopeId, s) {
  const slot = h("div.signlink");
  const fid = "sign-link-" + envelopeId + "-" + s.recipientId;
  const get = h("button.small.get-link", { type: "button", onclick: async () => {
    try {
      const out = await api("POST", `${base}/${enc(envelopeId)}/views/recipient`, { query: q, body: { recipientView: { recipientId: s.recipientId } } });
      const field = h("input.sign-link", { id: fid, type: "text", readonly: true, value: out.viewUrl });
      const copied = h("span.meta", { role: "status" });
      clear(slot, h("label", { for: fid }, t("esign.linkFor", { name: s.name || s.email || "" })), " ", field, " ",
        h("button.small.copy-link", { type: "button", onclick: async () => {
          field.select();
          try { await navigator.clipboard.writeText(field.value); copied.textContent = t("share.copied"); }
          catch (_) { copied.textContent = t("share.selectToCopy"); }
        } }, t("share.copy")), " ", copied, h("p.meta", t("esign.linkHint")));
      field.focus();
      field.select();
    } catch (ex) { status(errorText(ex), "error"); }
  } }, t("esign.getLink"));
  slot.append(get);
  return slot;
}

export async function esignSection(id, write, reload) {
  const base = `/esignature/local/${enc(id)}/envelopes`;
  const q = siteQuery();
  const out = await api("GET", base, { query: { ...q, limit: 20 } }).catch(() => ({ envelopes: [] }));
  const rows = (out.envelopes || []).map((e) => h("li.envelope", { dataset: { envelope: e.envelopeId, status: e.status } },
    h("p", h("strong", e.emailSubject || t("esign.noSubject")), " · ", h("span.status", named("esign.status.", e.status)),
      " · ", fmtDate(e.insertedDate, lang())),
    h("ul.signers", (e.signers || []).map((s) => h("li", { dataset: { recipient: s.recipientId, delivery: s.delivery || "" } },
      s.name || "", " <", s.email || "", "> · ",
      // The mail with the link failed (signers[].delivery, issue 47): say
      // it was not sent, and let the sender hand the link over.
      s.status === "sent" && s.delivery === "failed" ? h("strong.notsent", t("esign.notSent")) : named("esign.status.", s.status),
      s.signedDate ? " · " + fmtDate(s.signedDate, lang()) : "", s.declinedReason ? " · " + s.declinedReason : "",
      e.status === "sent" && s.status === "sent" && s.delivery === "failed" ? linkSlot(base, q, e.envelopeId, s) : null))),
    e.voidedReason ? h("p.meta", t("esign.voided", { reason: e.voidedReason })) : null,
    write && ["created", "sent", "signed"].includes(e.status) ? h("button.small.void", { type: "button", onclick: async () => {
      try {
        await api("POST", `${base}/${enc(e.envelopeId)}/void`, { query: q, body: { voidedReason: t("esign.voidReason") } });
        status(t("esign.voidedDone"), "info");
        reload();
      } catch (ex) { status(errorText(ex), "error"); }
    } }, t("esign.void")) : null));
  let form = null;
  if (write) {
    const name = h("input#sign-name", { type: "text", required: true, autocomplete: "off" });
    const email = h("input#sign-email", { type: "email", required: true, autocomplete: "off" });
    const subject = h("input#sign-subject", { type: "text", value: t("esign.defaultSubject") });
    form = h("form#esign-form",
      h("div.inline",
        h("label", { for: "sign-name" }, t("esign.name")), name,
        h("label", { for: "sign-email" }, t("esign.email")), email),
      h("div.inline", h("label", { for: "sign-subject" }, t("esign.subject")), subject,
        h("button.primary", { type: "submit" }, t("esign.send"))));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      try {
        const res = await api("POST", base, { query: q, body: { emailSubject: subject.value, signers: [{ name: name.value, email: email.value }] } });
        if ((res.signers || []).some((x) => x.delivery === "failed")) status(t("esign.notSentTo", { email: email.value }), "error");
        else status(t("esign.sent", { email: email.value }), "info");
        reload();
      } catch (ex) { status(errorText(ex), "error"); }
    });
  }
  return h("section#esign", h("h2", t("esign.title")),
    rows.length ? h("ul.envelopes#envelopes", rows) : h("p", t("esign.none")), form);
}
