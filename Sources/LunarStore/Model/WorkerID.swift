/// Who claimed a job, as `lunar queue ls` shows it (`build-3:4711`): any
/// non-empty text that tells workers apart.
public struct WorkerID: Sendable, Hashable, CustomStringConvertible {
  /// The text.
  public var name: String

  /// The worker called `name`.
  public init(_ name: String) { self.name = name }

  public var description: String { name }
}
