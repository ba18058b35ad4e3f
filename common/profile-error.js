// The error of a bad profile spec, profile file or trace: its message is one line that
// says what to give. Its own module so common/profiles.js and common/trace.js share it
// without importing each other. Plain ES module.
export class ProfileError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ProfileError';
  }
}
