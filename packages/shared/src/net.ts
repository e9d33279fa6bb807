import { connect } from 'node:net'

/** Whether something accepts TCP connections at the URL's host and port (within a second). */
export function answersAt(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return new Promise((done) => {
    const socket = connect(Number(port), hostname)
    socket.setTimeout(1000)
    socket.once('connect', () => {
      socket.destroy()
      done(true)
    })
    socket.once('error', () => done(false))
    socket.once('timeout', () => {
      socket.destroy()
      done(false)
    })
  })
}
