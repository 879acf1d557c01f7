import Foundation
import LuaKit
import LunarSchedules
import LunarStore

/// The schedules page: each schedule's cron and zone, its next ticks and
/// last one, paused or not.
enum SchedulesPage {
  /// The page for `schedules`, the next ticks counted from `now`; with
  /// `actions`, the session whose token the Pause, Resume and Trigger
  /// buttons carry.
  static func html(_ schedules: [Schedule], now: StoreTimestamp, actions: SessionToken? = nil) -> String {
    var rows = ""
    for schedule in schedules.sorted(by: { $0.name.bytes.lexicographicallyPrecedes($1.name.bytes) }) {
      let next = schedule.isPaused ? [] : nextTicks(of: schedule, after: now, count: 3)
      rows += """
        <tr><td>\(HTML.escape(schedule.name))</td><td><code>\(HTML.escape(schedule.cron))</code> \
        <span class="muted">\(HTML.escape(schedule.timeZone))</span></td>\
        <td>\(HTML.escape(schedule.file))</td>\
        <td class="status \(schedule.isPaused ? "parked" : "running")">\(schedule.isPaused ? "paused" : "active")</td>\
        <td>\(next.map(TimeText.moment).joined(separator: "<br>"))</td>\
        <td>\(schedule.lastTick.map(TimeText.moment) ?? "")</td>\(actions.map { buttons(schedule, session: $0) } ?? "")</tr>

        """
    }
    let table =
      schedules.isEmpty
      ? "<p>No schedules in this store (<code>lunar schedule add</code> makes one).</p>"
      : """
      <table>
      <thead><tr><th scope="col">Schedule</th><th scope="col">When</th><th scope="col">File</th>\
      <th scope="col">State</th><th scope="col">Next ticks</th><th scope="col">Last tick</th>\
      \(actions == nil ? "" : "<th scope=\"col\">Actions</th>")</tr></thead>
      <tbody>
      \(rows)</tbody>
      </table>
      """
    return Page.document(title: "Schedules", content: "<h1>Schedules</h1>\n\(table)")
  }

  /// The cell of `schedule`'s buttons: Pause or Resume, and Trigger.
  private static func buttons(_ schedule: Schedule, session: SessionToken) -> String {
    let name = [("schedule", HexName.encode(schedule.name))]
    let spoken = schedule.name.lossyString
    let toggle =
      schedule.isPaused
      ? Page.actionForm("/schedules/resume", session: session, fields: name, label: "Resume", spoken: "Resume \(spoken)")
      : Page.actionForm("/schedules/pause", session: session, fields: name, label: "Pause", spoken: "Pause \(spoken)")
    let trigger = Page.actionForm(
      "/schedules/trigger", session: session, fields: name, label: "Trigger now", spoken: "Trigger \(spoken) now")
    return "<td>\(toggle)\(trigger)</td>"
  }

  /// The next `count` ticks of `schedule` after `now`; none for a cron
  /// expression or zone the store holds but this build cannot read.
  static func nextTicks(of schedule: Schedule, after now: StoreTimestamp, count: Int) -> [StoreTimestamp] {
    guard let cron = try? CronExpression(schedule.cron), let zone = TimeZone(identifier: schedule.timeZone) else { return [] }
    var ticks: [StoreTimestamp] = []
    var after = Date(timeIntervalSince1970: Double(now.microseconds) / 1_000_000)
    while ticks.count < count, let next = cron.next(after: after, in: zone) {
      ticks.append(StoreTimestamp(microseconds: Int64((next.timeIntervalSince1970 * 1_000_000).rounded())))
      after = next
    }
    return ticks
  }
}
