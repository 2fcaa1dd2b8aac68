// Notes on a document (GET/POST /documents/{id}/notes, DELETE
// .../notes/{noteId}; API.md "Document notes"): the newest last, who
// wrote each and when; WRITE adds one, DELETE removes one after a
// question. The section draws itself again after a change, the rest of
// the page stays.
import { h, clear, fmtDate } from "./dom.js";
import { api } from "./api.js";
import { siteQuery, status, errorText } from "./ctx.js";
import { t, lang } from "../i18n/index.js";

const enc = encodeURIComponent;
export const maxNoteChars = 4000;

export function notesSection(id, write, del) {
  const q = siteQuery();
  const list = h("div#notes-list");
  const section = h("section#notes", { "aria-labelledby": "notes-title" }, h("h2#notes-title", t("docnotes.title")), list);
  const draw = async () => {
    let notes = [];
    try {
      const out = await api("GET", `/documents/${enc(id)}/notes`, { query: { ...q, limit: 100 } });
      notes = out.notes || [];
    } catch (ex) { clear(list, h("p.msg.error", errorText(ex))); return; }
    const rows = notes.map((n) => h("li.note", { dataset: { note: n.noteId } },
      h("p.note-text", n.text),
      h("p.meta", t("docnotes.by", { user: n.userId || "", date: fmtDate(n.insertedDate, lang()) }),
        del ? [" ", h("button.small.note-delete", { type: "button", "aria-label": t("docnotes.deleteOf", { date: fmtDate(n.insertedDate, lang()) }), onclick: async () => {
          if (!confirm(t("docnotes.deleteConfirm"))) return;
          try { await api("DELETE", `/documents/${enc(id)}/notes/${enc(n.noteId)}`, { query: q }); status(t("docnotes.deleted"), "info"); draw(); }
          catch (ex) { status(errorText(ex), "error"); }
        } }, t("docnotes.delete"))] : null)));
    clear(list, rows.length ? h("ul.notes", rows) : h("p#notes-none", t("docnotes.none")));
  };
  if (write) {
    const text = h("textarea#note-text", { rows: 3, maxlength: maxNoteChars, required: true });
    const form = h("form#note-form", h("div.field", h("label", { for: "note-text" }, t("docnotes.add")), text,
      h("small.meta", t("docnotes.hint", { n: maxNoteChars }))), h("div.actions", h("button.primary#note-add", { type: "submit" }, t("docnotes.addButton"))));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (!text.value.trim()) { text.focus(); return; }
      try {
        await api("POST", `/documents/${enc(id)}/notes`, { query: q, body: { note: { text: text.value } } });
        text.value = "";
        status(t("docnotes.added"), "info");
        await draw();
      } catch (ex) { status(errorText(ex), "error"); }
    });
    section.append(form);
  }
  draw();
  return section;
}
