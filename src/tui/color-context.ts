import { createContext, useContext } from 'react';

/**
 * Whether the console may colour anything. Ink's chalk ignores NO_COLOR and asciichart
 * writes raw escapes regardless, so components never pass a colour, bold or inverse
 * prop, nor asciichart colours, unless this says yes.
 */
export const ColorContext = createContext<boolean>(true);

export function useColor(): boolean {
  return useContext(ColorContext);
}
