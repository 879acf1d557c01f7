/// A store that keeps which workers are alive (both stores Lunar ships
/// do): `lunar worker` announces itself at each heartbeat and withdraws
/// when it stops; `lunar serve` lists them.
public protocol WorkerStore: RunStore {
  /// Records `presence`, replacing the worker's earlier record; forgets
  /// workers lost for longer than `WorkerPresence.forgottenAfter`.
  func announce(_ presence: WorkerPresence) throws(StoreError)

  /// Removes `worker`'s record: it stopped on purpose.
  func withdraw(_ worker: WorkerID) throws(StoreError)

  /// The workers recorded, by name.
  func workers() throws(StoreError) -> [WorkerPresence]
}

extension WorkerPresence {
  /// How long a lost worker stays listed after its lease ended: long enough
  /// to be seen the next morning, not forever.
  public static let forgottenAfter = Duration.seconds(24 * 3600)
}
