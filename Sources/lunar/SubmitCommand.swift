import LuaKit
import Lunar
import LunarStore

/// `lunar submit FILE [ARGS...]`: records a run of FILE as queued in the
/// store, with the fingerprint of the file's content, and prints its id at
/// once; a worker runs it. `--key K` makes a second submit with the same
/// key return the first one's run; `--resume RUN` (and `--force STEP`)
/// makes the worker resume RUN as `lunar run --resume RUN` would.
enum SubmitCommand {
  static let spec = CommandSpec(
    name: "submit",
    summary: "Queue a run of a workflow FILE for a worker and print its id; --key K submits it only once.",
    operands: "FILE [ARGS...]",
    options: [
      OptionSpec(
        name: "store", value: "URL", help: "queue the run in URL (sqlite:PATH or postgres://...; default $LUNAR_STORE or ~/.local/state/lunar/lunar.db)"),
      OptionSpec(name: "key", value: "K", help: "a second submit with the same key K returns the same run"),
      OptionSpec(
        name: "resume", value: "RUN",
        help: "reuse the outputs of run RUN's steps that succeeded with unchanged inputs and code, as lunar run --resume RUN does"),
      OptionSpec(
        name: "force", value: "STEP", help: "with --resume: run STEP again anyway, and the steps that need it (repeatable)"),
    ],
    optionsEndAtFirstOperand: true,
    run: run
  )

  static func run(_ parsed: ParsedArguments) -> Int32 {
    let location: StoreLocation
    do throws(UsageError) {
      guard let file = parsed.operands.first else { throw UsageError(message: parsed.missing("missing workflow FILE"), command: "submit") }
      guard !file.isEmpty else { throw UsageError(message: "the workflow FILE must not be empty", command: "submit") }
      if let key = parsed.bytes("key"), key.bytes.isEmpty {
        throw UsageError(message: "--key needs a non-empty key", command: "submit")
      }
      let forced = (parsed.flagBytes["force"] ?? [])
      if !forced.isEmpty {
        guard !forced.contains(where: \.bytes.isEmpty) else { throw UsageError(message: "--force needs a step's name", command: "submit") }
        guard parsed.value("resume") != nil else {
          throw UsageError(message: "--force needs --resume RUN: the run whose other outputs are reused", command: "submit")
        }
      }
      if let run = parsed.value("resume"), resumedRun(run) == nil {
        throw UsageError(message: "--resume needs a run's id (a positive number), not '\(run)'", command: "submit")
      }
      location = try StoreOption.location(parsed, command: "submit")
    } catch {
      return LunarCommandLine.usageFailure(error)
    }
    let file = parsed.operands[0]
    let content: [UInt8]
    do {
      content = try BoundedFileReader.read(file)
    } catch {
      Console.error("lunar: \(error.description)")
      return 1
    }
    do {
      let store = try location.openSchedulingStore()
      let submitted = try store.submit(
        RunSubmission(
          file: file, arguments: Array(parsed.operands.dropFirst()), fileFingerprint: Fingerprint(ofContent: content),
          key: parsed.bytes("key"), resumes: parsed.value("resume").flatMap(resumedRun),
          force: (parsed.flagBytes["force"] ?? [])))
      print(submitted.run.id)
      if !submitted.isNew {
        Console.error("lunar: key '\(RunText.name(submitted.key ?? LuaString("")))' was submitted before: run \(submitted.run.id) (\(submitted.run.status.rawValue))")
      }
      return 0
    } catch {
      Console.error("lunar: \(error.message)")
      return 1
    }
  }

  /// The run `--resume` names: an id only, since the workflow whose last
  /// run `last` would mean is known only once a worker loads the file.
  private static func resumedRun(_ text: String) -> RunID? {
    guard case .id(let run)? = try? RunReference(parsing: text) else { return nil }
    return run
  }
}
