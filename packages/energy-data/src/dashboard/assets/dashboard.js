// Draws every <canvas data-chart="name"> with the configuration the service builds for it.
// Chart.js is the UMD build served next to this file (global `Chart`).
;(() => {
  const lang = document.documentElement.lang === 'en' ? 'en' : 'it'
  const failed = lang === 'en' ? 'Chart unavailable' : 'Grafico non disponibile'

  async function draw(canvas) {
    const name = canvas.dataset.chart
    const status = canvas.closest('figure')?.querySelector('.status')
    try {
      const response = await fetch(`/chart/${encodeURIComponent(name)}?lang=${lang}`, {
        headers: { accept: 'application/json' },
      })
      if (!response.ok) throw new Error(`HTTP ${response.status}`)
      const config = await response.json()
      new window.Chart(canvas, config)
      if (status) status.textContent = ''
    } catch (error) {
      if (status) status.textContent = `${failed} (${error.message})`
    }
  }

  for (const canvas of document.querySelectorAll('canvas[data-chart]')) draw(canvas)
})()
