/// A reminder set some minutes before a launch's exact time.
public struct Reminder: Sendable, Equatable {
  /// Where a reminder stands.
  public enum State: Sendable, Equatable {
    case pending, delivered
    /// It can no longer be delivered; the reason says why.
    case failed(String)
  }

  /// The reminder's number, from 1.
  public let id: Int
  /// The launch it is for.
  public let launchID: String
  /// The source the launch came from.
  public let source: String
  /// Minutes before the launch (5, 15 or 60).
  public let minutesBefore: Int
  /// When it is due (seconds since the epoch); moves with the launch.
  public internal(set) var dueAt: Double
  /// Where it stands.
  public internal(set) var state: State
}

/// Why a reminder was refused.
public enum ReminderError: Error, Sendable, Equatable, CustomStringConvertible {
  case unknownLaunch(String)
  case invalidOffset(Int)
  case noExactTime(String)
  case tooLate(String)
  case tooMany(limit: Int)

  public var description: String {
    switch self {
    case .unknownLaunch(let id): "no launch '\(id)' in the schedule"
    case .invalidOffset(let minutes): "a reminder is 5, 15 or 60 minutes before launch, not \(minutes)"
    case .noExactTime(let name): "'\(name)' has no exact launch time yet"
    case .tooLate(let name): "too late: that reminder for '\(name)' would already have gone off"
    case .tooMany(let limit): "at most \(limit) reminders can be pending"
    }
  }
}

/// The reminders and their rules; owned by the schedule.
struct ReminderBook {
  static let offsets = [5, 15, 60]
  static let limit = 50
  private(set) var reminders: [Reminder] = []
  private var nextID = 1

  mutating func add(_ launch: Launch, source: String, minutesBefore: Int, now: Double) throws(ReminderError) -> Reminder {
    guard Self.offsets.contains(minutesBefore) else { throw .invalidOffset(minutesBefore) }
    guard reminders.filter({ $0.state == .pending }).count < Self.limit else { throw .tooMany(limit: Self.limit) }
    guard let planned = launch.plannedTime else { throw .noExactTime(launch.name) }
    let due = planned - Double(minutesBefore * 60)
    guard due > now else { throw .tooLate(launch.name) }
    let reminder = Reminder(id: nextID, launchID: launch.id, source: source, minutesBefore: minutesBefore, dueAt: due, state: .pending)
    nextID += 1
    reminders.append(reminder)
    return reminder
  }

  /// A refresh of `source` moved launches: pending reminders move with
  /// their launch, or fail when it lost its exact time or its listing.
  mutating func update(source: String, launches: [Launch]) {
    let byID = Dictionary(launches.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    for index in reminders.indices where reminders[index].state == .pending && reminders[index].source == source {
      let reminder = reminders[index]
      guard let launch = byID[reminder.launchID] else {
        reminders[index].state = .failed("the launch is no longer listed")
        continue
      }
      guard let planned = launch.plannedTime else {
        reminders[index].state = .failed("the launch no longer has an exact time")
        continue
      }
      reminders[index].dueAt = planned - Double(reminder.minutesBefore * 60)
    }
  }

  mutating func takeDue(now: Double) -> [Reminder] {
    var due: [Reminder] = []
    for index in reminders.indices where reminders[index].state == .pending && reminders[index].dueAt <= now {
      reminders[index].state = .delivered
      due.append(reminders[index])
    }
    return due
  }

  var nextDue: Double? {
    reminders.filter { $0.state == .pending }.map(\.dueAt).min()
  }
}
