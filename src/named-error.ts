// The base of every error class edge-api defines: its `name` is its class's name, so a class
// is one line when it adds nothing but a kind (`class ProofError extends NamedError {}`).
// It imports nothing: the verify worker thread loads it too.

export class NamedError extends Error {
  constructor (message: string) {
    super(message)
    this.name = new.target.name
  }
}
