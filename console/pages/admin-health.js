// Health (Admins; GET /system/health, API.md "Health, metrics, backup"):
// the disk and its write gate, the index lag, the pipeline queue, the
// cluster members and leader, certificate expiry (the HTTPS listener's,
// a cluster's CA and node certificates, the sites' signing certificates)
// and the version.
import { h, clear, fmtBytes, fmtDate } from "../js/dom.js";
import { api } from "../js/api.js";
import { isAdmin, tabNav } from "../js/admin.js";
import { status, errorText } from "../js/ctx.js";
import { named } from "../js/words.js";
import { t, lang, num } from "../i18n/index.js";

function kv(id, caption, rows) {
  return h("table.kv", { id }, h("caption", caption),
    h("tbody", rows.filter(Boolean).map(([k, v]) => h("tr", h("th", { scope: "row" }, k), h("td", v)))));
}

// Plain words for why the store takes no writes, and for a cluster
// member that stopped; the server's own text stays behind "Details".
const REFUSED = { "low-space": "admin.health.why.lowSpace", "read-only-open": "admin.health.why.readOnlyOpen", "io-error": "admin.health.why.ioError" };
function plain(key, detail) {
  return [t(key), detail ? h("details", h("summary", t("doc.details")), h("span.meta", detail)) : null];
}

function yes(b) { return b ? t("common.yes") : t("common.no"); }

function flag(ok, good, bad) {
  return h(ok ? "span.state.good" : "span.state.bad", ok ? good : bad);
}

// certName names a certificate row: the HTTPS listener, the cluster CA,
// a cluster member's node certificate (this node's own, or a peer's as
// it presented it to this node), or a site's signing certificate.
function certName(c) {
  switch (c.kind) {
    case "listener": return t("admin.health.listener");
    case "smtp-intake": return t("admin.health.smtpIntake");
    case "cluster-ca": return t("admin.health.clusterCA");
    case "cluster-node": return [t("admin.health.clusterNode", { node: c.nodeId }),
      c.self ? " (" + t("admin.health.thisNode") + ")" : null,
      c.seenAt ? h("small.meta", " · " + t("admin.health.peerSeen", { when: fmtDate(c.seenAt, lang()) })) : null];
  }
  return `${c.siteId} / ${c.alias}`;
}

// fingerprint writes a hex SHA-256 as scanners' pinning screens show it:
// byte pairs separated by colons, upper case.
function fingerprint(hex) {
  return String(hex).toUpperCase().match(/../g).join(":");
}

export default {
  path: /^\/admin\/health$/,
  async render(ctx, main) {
    if (!isAdmin()) { clear(main, tabNav(""), h("p.msg.error", { role: "alert" }, t("admin.denied"))); return; }
    const body = h("div#health");
    async function load() {
      const x = await api("GET", "/system/health");
      if (ctx.stale()) return;
      const st = x.storage || {}, ix = x.index || {}, pl = x.pipeline || {}, cl = x.cluster || {};
      const members = cl.members || [];
      const certs = x.certificates || [];
      clear(body,
        h("p#health-summary", flag(x.ready, t("admin.health.ready"), t("admin.health.notReady")), " · ",
          t("admin.health.version"), ": ", h("strong#health-version", x.version || "—")),
        h("div.health-grid",
          kv("health-storage", t("admin.health.storage"), [
            [t("admin.health.writes"), flag(st.writable, t("admin.health.writesOpen"), t("admin.health.writesRefused"))],
            !st.writable ? [t("admin.health.reason"), h("div#health-refused", plain(REFUSED[st.kind] || "admin.health.why.other", st.reason))] : null,
            [t("admin.health.free"), fmtBytes(st.freeBytes)],
            [t("admin.health.reserve"), fmtBytes(st.reserveBytes)],
            [t("admin.health.store"), fmtBytes((st.lsmBytes || 0) + (st.vlogBytes || 0))],
            st.since ? [t("admin.health.since"), fmtDate(st.since, lang())] : null,
          ]),
          kv("health-index", t("admin.health.index"), [
            [t("admin.health.queued"), ix.queued === undefined ? "—" : num(ix.queued)],
            [t("admin.health.lag"), t("admin.health.seconds", { n: Math.round(Number(ix.lagSeconds || 0) * 10) / 10 })],
          ]),
          kv("health-pipeline", t("admin.health.pipeline"), [
            [t("admin.health.running"), yes(pl.running)],
            [t("admin.health.queued"), pl.queued === undefined ? "—" : num(pl.queued)],
            [t("admin.health.oldest"), t("admin.health.seconds", { n: Math.round(Number(pl.oldestDueSeconds || 0)) })],
          ])),
        h("h2", t("admin.health.cluster")),
        h("p", !cl.clustered ? t("admin.health.single") : cl.leaderId && cl.leaderId === cl.nodeId ? t("admin.health.leads", { node: cl.nodeId })
          : t("admin.health.clustered", { node: cl.nodeId, state: named("admin.health.state.", cl.state), leader: cl.leaderId || "—" })),
        cl.halted || cl.raftStateUnreadable ? h("div.msg.error#health-cluster-problem", plain(cl.halted ? "admin.health.halted" : "admin.health.unreadable", cl.halted || cl.raftStateUnreadable)) : null,
        cl.clustered ? h("table.list#health-members", h("thead", h("tr", ["admin.health.node", "admin.health.address", "admin.health.voter", "admin.health.leader"]
          .map((k) => h("th", { scope: "col" }, t(k))))),
        h("tbody", members.map((m) => h("tr", h("td", m.nodeId), h("td", m.raftAddress || ""), h("td", yes(m.voter)), h("td", m.leader ? t("admin.health.isLeader") : ""))))) : null,
        h("h2", t("admin.health.certificates")),
        h("table.list#health-certs", h("thead", h("tr", ["admin.health.certificate", "admin.health.subject", "admin.health.expires", "admin.health.daysLeft"]
          .map((k) => h("th", { scope: "col" }, t(k))))),
        h("tbody", certs.length ? certs.map((c) => h("tr", { class: "cert-" + c.state },
          h("td", certName(c)),
          h("td", c.subject || "", c.sha256 ? h("small.meta.fingerprint", { title: t("admin.health.fingerprint") },
            h("br"), t("admin.health.fingerprint"), ": ", h("code", fingerprint(c.sha256))) : null),
          h("td", fmtDate(c.notAfter, lang())),
          h("td", flag(c.state === "ok", num(c.daysLeft), c.state === "expired" ? t("admin.health.expired") : t("admin.health.expiring", { n: c.daysLeft })))))
          : h("tr", h("td", { colspan: 4 }, t("admin.health.noCerts"))))));
    }
    await load();
    if (ctx.stale()) return;
    clear(main, tabNav("#/admin/health"), h("h1", t("admin.health.title")),
      h("div.actions", h("button#health-refresh", { type: "button", onclick: () => load().catch((e) => status(errorText(e), "error")) }, t("admin.health.refresh"))), body);
  },
};
