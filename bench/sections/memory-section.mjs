export async function memorySection() {
  return { markdown: '## Store memory\n\nNot measured yet.', targets: [] };
}
