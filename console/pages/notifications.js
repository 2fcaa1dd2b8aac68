// Notifications addressed to the user (GET /userNotifications: the
// records of the site whose cc or bcc is the user's e-mail address), newest
// first, paged. The API keeps no read state: the console remembers, per
// user and site in this browser, the newest notification seen (a
// preference, never a credential), and the header shows how many are
// newer than that.
import { h, clear, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { state, siteQuery, pager } from "../js/ctx.js";
import { named } from "../js/words.js";
import { t, lang } from "../i18n/index.js";

const PAGE = 20;
const COUNT_LIMIT = 50;

function seenKey() { return "quire.seen." + (state.user ? state.user.username : "") + "." + state.site; }
function seen() { try { return localStorage.getItem(seenKey()) || ""; } catch (_) { return ""; } }
function markSeen(date) {
  if (!date || date <= seen()) return;
  try { localStorage.setItem(seenKey(), date); } catch (_) { /* storage off */ }
}

// badge is the unread count shown next to the navigation link, filled in
// when the first page of notifications arrives.
const badgeEl = () => document.getElementById("unread");
async function refreshBadge() {
  const el = badgeEl();
  if (!el) return;
  try {
    const out = await api("GET", "/userNotifications", { query: siteQuery({ limit: COUNT_LIMIT }) });
    const since = seen();
    const list = out.notifications || [];
    const n = list.filter((x) => (x.insertedDate || "") > since).length;
    el.hidden = n === 0;
    const many = n >= COUNT_LIMIT && out.next;
    el.textContent = many ? t("notes.more", { n: COUNT_LIMIT }) : t("notes.count", { n });
    el.setAttribute("aria-label", many ? t("notes.unreadMore", { n: COUNT_LIMIT }) : t("notes.unread", { n }));
  } catch (_) { el.hidden = true; }
}

export default {
  path: /^\/notifications$/,
  nav: "nav.notifications",
  href: "#/notifications",
  badge() {
    const el = h("span.badge#unread", { hidden: true });
    setTimeout(refreshBadge, 0);
    return el;
  },
  async render(ctx, main) {
    const list = h("ul.notes#notification-list");
    const pg = pager(load);
    let first = true;
    async function load(token) {
      const out = await api("GET", "/userNotifications", { query: siteQuery({ limit: PAGE, next: token }) });
      if (ctx.stale()) return;
      const since = seen();
      const items = out.notifications || [];
      clear(list, items.map((n) => h("li.note", { class: (n.insertedDate || "") > since ? "unread" : null },
        h("h2", n.subject || t("notes.noSubject"), (n.insertedDate || "") > since ? h("span.new", " · ", t("notes.new")) : null),
        h("p.meta", fmtDate(n.insertedDate || n.notificationDate, lang()), " · ", named("notetype.", n.notificationType),
          n.status ? [" · ", named("notestatus.", n.status)] : null),
        n.body ? h("p.body", n.body) : null,
        n.documentId ? h("a", { href: "#/doc/" + encodeURIComponent(n.documentId) }, t("notes.open")) : null)));
      if (!items.length) list.append(h("li", t("notes.empty")));
      pg.update(out.next);
      if (first && items.length) { markSeen(items[0].insertedDate); refreshBadge(); }
      first = false;
    }
    await load("");
    if (ctx.stale()) return;
    clear(main, h("h1", t("notes.title")), list, pg.el);
  },
};
